// The console plugin on its own fastify instance with a controlled clock, over a real
// composed runtime and the sidecar's real Authenticator: session expiry and the fresh
// sign-in key registration needs, and the generic mounting of view pages and actions
// (roles, CSRF, their own audit events, reserved paths, download names).
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BrowserKeyStore,
  type ConsoleAction,
  type ConsolePage,
  consolePlugin,
  html,
} from "../../src/console/index.js";
import { WardenError } from "../../src/contracts/index.js";
import { generateKeyPair } from "../../src/crypto/index.js";
import { ApproverKeyring } from "../../src/journal/index.js";
import { Authenticator, ERROR_STATUS, hashToken } from "../../src/server/index.js";
import { type ConsoleSidecar, startConsoleSidecar, TOKENS } from "./harness.js";

let s: ConsoleSidecar;
let app: FastifyInstance;
let now = 1_000_000;
const ring = new ApproverKeyring();

const auditorPage: ConsolePage = {
  path: "/audit-only",
  title: "Audit only",
  roles: ["auditor"],
  render: async (ctx) => html`<p>hello ${ctx.principalId}</p>`,
};
const failingPage: ConsolePage = {
  path: "/runs-of/:id",
  title: "Run",
  roles: ["auditor"],
  render: async (_ctx, input) => {
    throw new WardenError("ERR_RUN_UNKNOWN", `no run ${input.params.id}`);
  },
};
const exportAction: ConsoleAction = {
  path: "/audit-only/export",
  roles: ["auditor"],
  audit: "warden.console.test_export",
  handle: async (_ctx, body) => ({
    kind: "download",
    filename: '../evil"; name=x.json',
    mediaType: "application/json",
    body: JSON.stringify({ got: body }),
    audit: { rows: 1 },
  }),
};

beforeAll(async () => {
  s = await startConsoleSidecar();
  const auth = new Authenticator({
    principals: [{ id: "agent-a", tokenSha256: hashToken(TOKENS.agent) }],
    approvers: [
      { id: "alice", roles: ["approver"], tokenSha256: hashToken(TOKENS.approver) },
      { id: "audrey", roles: ["auditor"], tokenSha256: hashToken(TOKENS.auditor) },
    ],
  });
  app = Fastify();
  consolePlugin(app, {
    runtime: s.server.runtime.composed,
    config: {
      enabled: true,
      idleTimeoutSeconds: 60,
      maxSessionSeconds: 3600,
      freshSignInSeconds: 30,
      maxSessions: 16,
      signInPerMinute: 100,
      maxKeysPerApprover: 4,
      maxStreams: 4,
    },
    tls: true,
    signIn: (token) => {
      const r = auth.authenticate(`Bearer ${token}`, undefined);
      return r.ok && r.identity.kind === "operator" ? r.identity : undefined;
    },
    keys: BrowserKeyStore.open(undefined, 4),
    ring,
    pages: [auditorPage, failingPage],
    actions: [exportAction],
    now: () => now,
    statusOf: (code) =>
      Object.hasOwn(ERROR_STATUS, code) ? (ERROR_STATUS as Record<string, number>)[code] : undefined,
  });
  await app.ready();
});
afterAll(async () => {
  await app.close();
  await s.stop();
});

async function signIn(token: string): Promise<{ cookie: string; csrf: string }> {
  const r = await app.inject({
    method: "POST",
    url: "/console/sign-in",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    payload: new URLSearchParams({ token }).toString(),
  });
  expect(r.statusCode).toBe(303);
  const set = String(r.headers["set-cookie"]);
  expect(set).toContain("Secure");
  const cookie = set.split(";")[0] as string;
  const home = await app.inject({ url: "/console/", headers: { cookie } });
  const csrf = /name="csrf" value="([^"]+)"/.exec(home.body)?.[1] as string;
  return { cookie, csrf };
}

const form = (cookie: string, fields: Record<string, string>, extra: Record<string, string> = {}) => ({
  method: "POST" as const,
  headers: { cookie, "content-type": "application/x-www-form-urlencoded", ...extra },
  payload: new URLSearchParams(fields).toString(),
});
const codeOf = (text: string) =>
  /<code>(ERR_[A-Z_]+)<\/code>|"code":"(ERR_[A-Z_]+)"/.exec(text)?.slice(1).find(Boolean);

describe("session expiry over HTTP", () => {
  it("a session idle past the timeout is refused (ERR_CONSOLE_SESSION) even with its CSRF token", async () => {
    const { cookie, csrf } = await signIn(TOKENS.approver);
    now += 61_000;
    const r = await app.inject({
      url: "/console/approvals/x",
      ...form(cookie, { csrf, outcome: "approve" }),
    });
    expect(r.statusCode).toBe(401);
    expect(codeOf(r.body)).toBe("ERR_CONSOLE_SESSION");
  });
});

describe("browser key registration", () => {
  it("registering a new key needs a fresh sign-in (ERR_CONSOLE_NOT_FRESH); a fresh one registers it into the keyring", async () => {
    const { cookie, csrf } = await signIn(TOKENS.approver);
    const key = generateKeyPair("ed25519");
    const x = key.publicKey.export({ format: "jwk" }).x as string;
    now += 31_000;
    await app.inject({ url: "/console/", headers: { cookie } }); // still in use, not idle
    const stale = await app.inject({
      url: "/console/keys",
      ...form(cookie, { csrf, x }, { accept: "application/json" }),
    });
    expect(stale.statusCode).toBe(401);
    expect(codeOf(stale.body)).toBe("ERR_CONSOLE_NOT_FRESH");
    expect(ring.key("alice", key.keyId)).toBeUndefined();
    const fresh = await signIn(TOKENS.approver);
    const ok = await app.inject({ url: "/console/keys", ...form(fresh.cookie, { csrf: fresh.csrf, x }) });
    expect(ok.statusCode).toBe(200);
    expect(ring.key("alice", key.keyId)).toBeDefined();
  });
});

describe("mounted view pages and actions", () => {
  it("a page is served to its role only", async () => {
    const auditor = await signIn(TOKENS.auditor);
    const approver = await signIn(TOKENS.approver);
    const ok = await app.inject({ url: "/console/audit-only", headers: { cookie: auditor.cookie } });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain("hello audrey");
    expect(ok.headers["content-security-policy"]).toContain("default-src 'none'");
    const no = await app.inject({ url: "/console/audit-only", headers: { cookie: approver.cookie } });
    expect(no.statusCode).toBe(403);
    expect(codeOf(no.body)).toBe("ERR_CONSOLE_FORBIDDEN");
    const anon = await app.inject({ url: "/console/audit-only" });
    expect(anon.statusCode).toBe(303);
  });

  it("an action needs CSRF, is journaled under its own event (refused and done), and its download name is made safe", async () => {
    const { cookie, csrf } = await signIn(TOKENS.auditor);
    const forged = await app.inject({ url: "/console/audit-only/export", ...form(cookie, { q: "1" }) });
    expect(forged.statusCode).toBe(403);
    const r = await app.inject({ url: "/console/audit-only/export", ...form(cookie, { csrf, q: "1" }) });
    expect(r.statusCode).toBe(200);
    expect(r.headers["content-disposition"]).toBe('attachment; filename="export.._evil___name_x.json"');
    expect(JSON.parse(r.body)).toEqual({ got: { q: "1" } });
    const entries = await s.server.runtime.store.query({ type: "warden.console.test_export" });
    expect(entries.map((e) => e.body.outcome)).toEqual(["refused", "ok"]);
    expect(entries[1]?.body).toMatchObject({ principal_id: "audrey", rows: 1 });
  });

  it("a coded error a page throws answers with the server table's status and code, path parameters reach the page", async () => {
    const { cookie } = await signIn(TOKENS.auditor);
    const r = await app.inject({ url: "/console/runs-of/abc", headers: { cookie } });
    expect(r.statusCode).toBe(404);
    expect(codeOf(r.body)).toBe("ERR_RUN_UNKNOWN");
    expect(r.body).toContain("no run abc");
  });

  it("a view that claims one of the console's own paths is refused at mount", async () => {
    const other = Fastify();
    consolePlugin(other, {
      runtime: s.server.runtime.composed,
      config: { ...(await import("../../src/console/index.js")).CONSOLE_DEFAULTS, enabled: true },
      tls: false,
      signIn: () => undefined,
      keys: BrowserKeyStore.open(undefined, 1),
      ring: undefined,
      statusOf: () => undefined,
      pages: [{ ...auditorPage, path: "/approvals" }],
    });
    await expect(other.ready()).rejects.toThrow(/reserved/);
  });
});
