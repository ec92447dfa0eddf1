// The console's test harness: the shared end-to-end harness (bench/_console-harness.ts:
// a real sidecar with the console on, the browser) and a small cookie-keeping client for
// the console's HTTP tests.
export {
  type ConsoleSidecar,
  NoteService,
  POLICY,
  startConsoleSidecar,
  TOKENS,
} from "../../bench/_console-harness.js";

import type { ConsoleSidecar } from "../../bench/_console-harness.js";
import { generateKeyPair, type KeyPair } from "../../src/crypto/index.js";
import { until } from "../server/harness.js";

/** Policy violations (denied shell calls) until APAE trust quarantines the agent (apae on). */
export async function quarantineAgent(s: ConsoleSidecar, token: string): Promise<void> {
  const apae = s.server.runtime.apae;
  if (apae === undefined) throw new Error("apae is off");
  const runId = await s.run();
  await until(async () => {
    const r = await fetch(`${s.url}/v1/decide`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ runId, toolClass: "shell", action: "exec", parameters: { cmd: "x" } }),
    });
    await r.text();
    await apae.settled();
    return apae.viewOf("agent-a").status === "quarantined" ? true : undefined;
  }, 20_000);
}

/** A cookie-keeping console client over fetch (no redirects followed). */
export class ConsoleClient {
  cookie: string | undefined;
  csrf: string | undefined;
  constructor(readonly url: string) {}

  async request(
    path: string,
    init: { form?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; text: string; headers: Headers }> {
    const headers: Record<string, string> = { ...init.headers };
    if (this.cookie !== undefined) headers.cookie = this.cookie;
    let body: string | undefined;
    if (init.form !== undefined) {
      body = new URLSearchParams(init.form).toString();
      headers["content-type"] = "application/x-www-form-urlencoded";
    }
    const res = await fetch(`${this.url}/console${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers,
      redirect: "manual",
      ...(body !== undefined ? { body } : {}),
    });
    const set = res.headers.get("set-cookie");
    if (set !== null) {
      const v = set.split(";")[0] ?? "";
      this.cookie = v.endsWith("=") ? undefined : v;
    }
    return { status: res.status, text: await res.text(), headers: res.headers };
  }

  /** Signs in and reads the CSRF token from the first page that carries one. */
  async signIn(token: string): Promise<number> {
    const r = await this.request("/sign-in", { form: { token } });
    if (r.status !== 303) return r.status;
    const home = await this.request("/");
    this.csrf = /name="csrf" value="([^"]+)"/.exec(home.text)?.[1];
    return r.status;
  }
}

/** An approver signed in to the console at `url` with a fresh browser key registered (the key pair: tests sign with it). */
export async function approverWithKey(
  url: string,
  token: string,
): Promise<{ c: ConsoleClient; key: KeyPair }> {
  const c = new ConsoleClient(url);
  await c.signIn(token);
  const key = generateKeyPair("ed25519");
  const r = await c.request("/keys", {
    form: { csrf: c.csrf ?? "", x: key.publicKey.export({ format: "jwk" }).x as string },
  });
  if (r.status !== 200) throw new Error(`key registration answered ${r.status}: ${r.text}`);
  return { c, key };
}
