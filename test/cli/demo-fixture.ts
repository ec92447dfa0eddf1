// A workspace for `warden run` / `warden exec` tests: the demo's contracts pointed at a
// wiki served on loopback by the test, the demo policy, and a sandbox holding a note, a
// fake secret and a symlink that escapes the sandbox.
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { REPO_ROOT } from "../helpers/repo.js";

export const DEMO = join(REPO_ROOT, "examples", "demo");
export const WELCOME = readFileSync(join(DEMO, "pages", "welcome.html"));
export const SECRET = "sk-test-0123456789abcdef0123456789abcdef";

export interface Workspace {
  dir: string;
  contracts: string;
  policy: string;
  sandbox: string;
  outside: string;
  origin: string;
  /** Bodies POSTed to /collect. */
  collected: string[];
  script(turns: unknown[]): string;
  json(name: string, value: unknown): string;
  close(): Promise<void>;
}

export async function workspace(): Promise<Workspace> {
  const dir = mkdtempSync(join(tmpdir(), "warden-cli-run-"));
  const collected: string[] = [];
  const server: Server = createServer((req, res) => {
    if (req.method === "POST" && req.url === "/collect") {
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c.toString();
      });
      req.on("end", () => {
        collected.push(body);
        res.writeHead(200, { "content-type": "text/plain" }).end("received");
      });
      return;
    }
    const m = /^\/pages\/([a-z0-9-]+)\.html$/.exec(req.url ?? "");
    const page = m?.[1] === "welcome" || m?.[1] === "release-notes" ? m[1] : undefined;
    if (page === undefined) return void res.writeHead(404).end("not found");
    res
      .writeHead(200, { "content-type": "text/html" })
      .end(readFileSync(join(DEMO, "pages", `${page}.html`)));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const contracts = join(dir, "contracts");
  mkdirSync(contracts);
  for (const f of readdirSync(join(DEMO, "contracts"))) {
    const text = readFileSync(join(DEMO, "contracts", f), "utf8").replaceAll("http://127.0.0.1:8080", origin);
    writeFileSync(join(contracts, f), text);
  }
  const sandbox = join(dir, "sandbox");
  const outside = join(dir, "outside");
  mkdirSync(join(sandbox, "secrets"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(sandbox, "notes.txt"), "the report ships on friday\n");
  writeFileSync(join(sandbox, "secrets", "api_key.txt"), `${SECRET}\n`);
  writeFileSync(join(outside, "private.txt"), "outside the sandbox\n");
  symlinkSync(join(outside, "private.txt"), join(sandbox, "shortcut.txt"));

  return {
    dir,
    contracts,
    policy: join(DEMO, "policy.yaml"),
    sandbox,
    outside,
    origin,
    collected,
    script(turns) {
      const p = join(dir, `script-${Math.random().toString(36).slice(2)}.yaml`);
      writeFileSync(p, stringify({ turns }));
      return p;
    },
    json(name, value) {
      const p = join(dir, name);
      writeFileSync(p, typeof value === "string" ? value : JSON.stringify(value));
      return p;
    },
    async close() {
      await new Promise<void>((r) => server.close(() => r()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
