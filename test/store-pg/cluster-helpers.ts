// Three `warden sidecar` processes (the built CLI) on one PostgreSQL, started from a copy
// of deploy/ (the docker-compose file's sidecar configuration) without containers.
import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync, cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type pg from "pg";
import { generateKeyPair, saveKeyPair } from "../../src/crypto/index.js";
import { migrate } from "../../src/store-pg/index.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { freshDatabase, poolOf } from "./helpers.js";

export const ROOT = resolve(import.meta.dirname, "../..");
export const AGENT = "demo-agent-token-change-me";
export const AGENT_2 = "demo-agent-2-token-change-me";
export const AGENT_3 = "demo-agent-3-token-change-me";
export const OPERATOR = "demo-approver-token-change-me";

export interface DeployTweaks {
  /** YAML lines added to the `store:` section (indented two spaces), e.g. run leases. */
  store?: string[];
  /** YAML lines added to `gate.context:` (indented four spaces), e.g. rate limits. */
  context?: string[];
  /** YAML text appended to sidecar.yaml (top-level keys the file does not have). */
  sidecar?: string;
  /** YAML rule items inserted first in the policy's `rules:` list. */
  rules?: string;
}

/** A copy of deploy/ with a fresh journal key (shared by every replica, as a Secret is). */
export function deployCopy(tweaks: DeployTweaks = {}): string {
  if (!existsSync(join(ROOT, "dist/src/cli/main.js")))
    throw new Error("the cluster tests spawn the built CLI: run `npm run build` first");
  const dir = mkdtempSync(join(tmpdir(), "warden-cluster-"));
  cpSync(join(ROOT, "deploy"), dir, { recursive: true });
  saveKeyPair(generateKeyPair("ed25519"), join(dir, "keys"), { name: "journal" });
  const config = join(dir, "sidecar.yaml");
  if (tweaks.store !== undefined) {
    const text = readFileSync(config, "utf8").replace(
      "  url: env:WARDEN_DB_URL\n",
      `  url: env:WARDEN_DB_URL\n${tweaks.store.map((l) => `  ${l}\n`).join("")}`,
    );
    writeFileSync(config, text);
  }
  if (tweaks.context !== undefined) {
    const text = readFileSync(config, "utf8").replace(
      "  context:\n",
      `  context:\n${tweaks.context.map((l) => `    ${l}\n`).join("")}`,
    );
    writeFileSync(config, text);
  }
  if (tweaks.sidecar !== undefined) appendFileSync(config, `\n${tweaks.sidecar}\n`);
  if (tweaks.rules !== undefined) {
    const policy = join(dir, "policy.yaml");
    writeFileSync(policy, readFileSync(policy, "utf8").replace("rules:\n", `rules:\n${tweaks.rules}`));
  }
  return dir;
}

export interface Node {
  name: string;
  child: ChildProcess;
  url: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output: () => string;
}

/** Starts `warden sidecar` with the copied config; resolves once it listens, rejects if it exits first. */
export function startNode(dir: string, name: string, dbUrl: string): Promise<Node> {
  const child = spawn(
    process.execPath,
    [
      join(ROOT, "bin/warden.js"),
      "sidecar",
      "--config",
      join(dir, "sidecar.yaml"),
      "--host",
      "127.0.0.1",
      "--port",
      "0",
    ],
    { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, WARDEN_DB_URL: dbUrl } },
  );
  let out = "";
  child.stdout!.on("data", (b: Buffer) => {
    out += b.toString();
  });
  child.stderr!.on("data", (b: Buffer) => {
    out += b.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once("exit", (code, signal) => r({ code, signal })),
  );
  return new Promise((res, rej) => {
    const t = setTimeout(() => rej(new Error(`${name} did not start: ${out}`)), 30_000);
    void exited.then((e) => {
      clearTimeout(t);
      rej(new Error(`${name} exited (${e.code ?? e.signal}) before listening: ${out}`));
    });
    child.stdout!.on("data", () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(t);
        res({ name, child, url: m[1] as string, exited, output: () => out });
      }
    });
  });
}

export async function stopNode(n: Node): Promise<void> {
  if (n.child.exitCode !== null || n.child.signalCode !== null) return;
  n.child.kill("SIGTERM");
  await n.exited;
}

export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

export async function call(base: string, path: string, token: string, body?: unknown): Promise<Answer> {
  try {
    const res = await fetch(`${base}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  } catch {
    // The node is gone (killed): no answer, so nothing was acknowledged.
    return { status: 0, body: {} };
  }
}

export async function startRun(n: Node, token = AGENT): Promise<string> {
  const r = await call(n.url, "/v1/runs", token, {});
  if (r.status !== 201 || typeof r.body.runId !== "string") throw new Error(`no run: ${JSON.stringify(r)}`);
  return r.body.runId;
}

export const echo = (runId: string, message = "hello") => ({ runId, tool: "echo", parameters: { message } });

export const codeOf = (a: Answer): string | undefined =>
  (a.body.error as { code?: string } | undefined)?.code;

/** One embedded PostgreSQL, a fresh migrated database and sidecars a, b, c from `dir`. */
export interface Cluster {
  server: PostgresServer;
  dbUrl: string;
  db: pg.Pool;
  nodes: Node[];
}

/** Starts a cluster; on a failure what was started is stopped before the error is thrown. */
export async function startCluster(dir: string): Promise<Cluster> {
  const server = await startPostgres();
  const nodes: Node[] = [];
  let db: pg.Pool | undefined;
  try {
    const dbUrl = await freshDatabase(server.connectionString);
    db = poolOf(dbUrl, 2);
    await migrate(db);
    for (const name of ["a", "b", "c"]) nodes.push(await startNode(dir, name, dbUrl));
    return { server, dbUrl, db, nodes };
  } catch (err) {
    for (const n of nodes) await stopNode(n);
    await db?.end();
    await server.stop();
    throw err;
  }
}

export async function stopCluster(c: Cluster | undefined): Promise<void> {
  if (c === undefined) return;
  for (const n of c.nodes) await stopNode(n);
  await c.db.end();
  await c.server.stop();
}
