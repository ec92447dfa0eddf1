// Hook source pins shared by every replica (distributed mode), on one real PostgreSQL:
// each replica is a real composeRuntime over `store: {kind: postgres}` with a real hooks
// engine on it, judging PreMCPConnect events. Written as key substitutions and rug pulls
// timed between replicas. (Contract-key pins: tofu-pins.test.ts.)
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fingerprintOf, generateKeyPair, type KeyPair, saveKeyPair } from "../../src/crypto/index.js";
import { createEngine, type Engine, type EngineConfig, hostToolsPolicyPath } from "../../src/hooks/index.js";
import { type SourceLoad, signSourceManifest } from "../../src/hooks/source-trust.js";
import { composeRuntime, type Runtime } from "../../src/runtime/index.js";
import { hashToken } from "../../src/server/index.js";
import { migrate, PgTofuPins } from "../../src/store-pg/index.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { ev } from "../hooks/events.js";
import { type Sidecar, startTestSidecar } from "../server/harness.js";
import { freshDatabase, poolOf } from "./helpers.js";

const JOURNAL_KEY = generateKeyPair("ed25519");
const PUBLISHER = generateKeyPair("p256");
const ATTACKER = generateKeyPair("p256");
const pem = (k: KeyPair) => k.publicKey.export({ type: "spki", format: "pem" }).toString();
const SOURCE_TRUST = { publishers: { "acme.example": [pem(PUBLISHER), pem(ATTACKER)] } };

let server: PostgresServer;
let url: string;
let pool: pg.Pool;
const engines: Engine[] = [];
const runtimes: Runtime[] = [];
const sidecars: Sidecar[] = [];

beforeAll(async () => {
  server = await startPostgres();
  url = await freshDatabase(server.connectionString);
  pool = poolOf(url, 4);
  await migrate(pool);
}, 120_000);

afterAll(async () => {
  for (const s of sidecars) await s.stop();
  for (const e of engines) await e.close();
  for (const rt of runtimes) await rt.close();
  await pool?.end();
  await server?.stop();
});

async function distributedRuntime(node: string): Promise<Runtime> {
  const home = mkdtempSync(join(tmpdir(), `warden-tofu-hooks-${node}-`));
  const rt = await composeRuntime({
    policy: [hostToolsPolicyPath()],
    journal: { path: join(home, "journal.db"), signer: JOURNAL_KEY },
    gate: { principals: (id) => ({ id, roles: [] }), runs: "caller" },
    store: { kind: "postgres", url, node, pool: { max: 2 } },
  });
  runtimes.push(rt);
  return rt;
}

/** One replica: a distributed runtime and a hooks engine over it (handshake done). */
async function replica(node: string, config: Partial<EngineConfig> = {}): Promise<Engine> {
  const e = await createEngine({
    runtime: await distributedRuntime(node),
    sourceTrust: SOURCE_TRUST,
    ...config,
  });
  engines.push(e);
  if (!(await e.versionCheck({ aarts_version: "1" })).compatible) throw new Error("handshake failed");
  return e;
}

const load = (id: string, command: string): SourceLoad => ({
  kind: "mcp-server",
  id,
  location: "project",
  hashes: [],
  command,
});
/** A PreMCPConnect of server `id` launched by `command`, signed by `key` when given. */
const connect = (id: string, command: string, key?: KeyPair, source = "project") =>
  ev("PreMCPConnect", {
    source,
    server_id: id,
    transport: "stdio",
    server_command: command,
    ...(key === undefined
      ? {}
      : {
          signature: {
            publisher: "acme.example",
            value: signSourceManifest(key.privateKey, load(id, command)),
          },
        }),
  });

const GITHUB = "npx -y @acme/github-mcp@1.4.0";

describe("hook source pins across replicas", () => {
  it("an MCP server re-signed by an attacker's key on replica B after A pinned the publisher's is denied on B and on C started later", async () => {
    const a = await replica("src-a");
    expect((await a.handle(connect("github", GITHUB, PUBLISHER))).decision).toBe("allow");
    const b = await replica("src-b");
    const onB = await b.handle(connect("github", GITHUB, ATTACKER));
    expect(onB.decision).toBe("deny");
    expect(onB.matched_rule_id).toBe("aarts-source-changed");
    const c = await replica("src-c");
    expect((await c.handle(connect("github", GITHUB, ATTACKER))).matched_rule_id).toBe(
      "aarts-source-changed",
    );
    expect((await c.handle(connect("github", GITHUB, PUBLISHER))).decision).toBe("allow");
  });

  it("a rug pull of a user MCP server timed on replica B, running since before A's first use, is denied on B", async () => {
    const [a, b] = [await replica("rug-a"), await replica("rug-b")];
    const user = (command: string) => connect("tracker", command, undefined, "user");
    expect((await a.handle(user("npx -y tracker@1.0.0"))).decision).toBe("allow");
    const v = await b.handle(user("npx -y tracker@6.6.6"));
    expect(v.decision).toBe("deny");
    expect(v.matched_rule_id).toBe("aarts-source-changed");
    expect((await b.handle(user("npx -y tracker@1.0.0"))).decision).toBe("allow");
  });

  it("first uses of two launch commands through three replicas at once: one command is trusted, everywhere", async () => {
    const rs = [await replica("burst-a"), await replica("burst-b"), await replica("burst-c")];
    const commands = ["npx -y burst@1.0.0", "npx -y burst@6.6.6"];
    const verdicts = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const command = commands[i % 2] as string;
        const v = await (rs[i % 3] as Engine).handle(connect("burst", command, undefined, "user"));
        return { command, decision: v.decision, rule: v.matched_rule_id };
      }),
    );
    const allowed = new Set(verdicts.filter((v) => v.decision === "allow").map((v) => v.command));
    expect(allowed.size).toBe(1);
    const refused = verdicts.filter((v) => v.decision !== "allow");
    expect(refused.length).toBe(6);
    expect(refused.every((v) => v.rule === "aarts-source-changed")).toBe(true);
  });

  it("an operator's re-pin of a source key is used by every replica started afterwards", async () => {
    const a = await replica("repin-src-a");
    expect((await a.handle(connect("rotated", GITHUB, PUBLISHER))).decision).toBe("allow");
    await new PgTofuPins(pool).replace("hook-source", {
      toolId: "mcp-server:rotated",
      domain: "acme.example",
      fingerprint: fingerprintOf(ATTACKER.publicKey),
      pinnedAt: "2026-11-25T00:00:00Z",
    });
    for (const node of ["repin-src-b", "repin-src-c"]) {
      const r = await replica(node);
      // The old key first: a replica judging alone would take it as a first use.
      expect((await r.handle(connect("rotated", GITHUB, PUBLISHER))).matched_rule_id).toBe(
        "aarts-source-changed",
      );
      expect((await r.handle(connect("rotated", GITHUB, ATTACKER))).decision).toBe("allow");
    }
  });

  it("a node-local source pins file beside the shared pins refuses the engine", async () => {
    const dir = mkdtempSync(join(tmpdir(), "warden-tofu-hooks-file-"));
    writeFileSync(join(dir, "pins.json"), '{"warden_pin_store":1,"pins":[]}');
    const start = createEngine({
      runtime: await distributedRuntime("file-src"),
      sourcePins: join(dir, "pins.json"),
    });
    await expect(start).rejects.toMatchObject({ code: "ERR_HOOK_CONFIG_INVALID" });
  });
});

const HOST = "token-host-one-0123456789";
/** The journal key every replica shares (a Secret), as a file. */
const JOURNAL_KEY_FILE = saveKeyPair(JOURNAL_KEY, mkdtempSync(join(tmpdir(), "warden-tofu-key-")), {
  name: "journal",
}).privatePem;

/** A sidecar replica with the AARTS transport on, its host authenticated by HOST. */
async function sidecar(node: string, hooks: Record<string, unknown> = {}): Promise<Sidecar> {
  const s = await startTestSidecar({
    requireContract: false,
    config: {
      policies: [hostToolsPolicyPath()],
      journal: { path: "journal.db", key: JOURNAL_KEY_FILE },
      store: { kind: "postgres", url, node },
      hooks: { maxEngines: 2, ...hooks },
      gate: {
        tenant: "test",
        environment: "test",
        requireContract: false,
        principals: [{ id: "host-1", roles: ["host"] }],
      },
      auth: { principals: [{ id: "host-1", tokenSha256: hashToken(HOST) }], approvers: [] },
    },
  });
  sidecars.push(s);
  const hs = await s.call("/v1/hooks/handshake", { token: HOST, body: { aarts_version: "1" } });
  expect(hs.status).toBe(200);
  return s;
}

describe("hook source pins across sidecars", () => {
  it("a launch command changed on sidecar B after sidecar A trusted the server is denied over HTTP", async () => {
    const [a, b] = [await sidecar("http-a"), await sidecar("http-b")];
    const call = (s: Sidecar, command: string) =>
      s.call("/v1/hooks/events", { token: HOST, body: connect("http-tracker", command, undefined, "user") });
    const first = await call(a, "npx -y tracker@1.0.0");
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ decision: "allow" });
    const pulled = await call(b, "npx -y tracker@6.6.6");
    expect(pulled.body).toMatchObject({ decision: "deny", matched_rule_id: "aarts-source-changed" });
  });

  it("a sidecar with a node-local hooks.sourcePins file beside the shared store does not start", async () => {
    await expect(sidecar("http-file", { sourcePins: "source-pins.json" })).rejects.toMatchObject({
      code: "ERR_HOOK_CONFIG_INVALID",
    });
  });
});
