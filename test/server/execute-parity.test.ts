// Sidecar parity: the file, database (SQLite and PostgreSQL) and MCP executors behind
// POST /v1/execute, with the same contracts and policy as the library, attacked through
// the sidecar: path traversal and symlink escapes, SQL outside the contract, a statement
// whose class the contract does not allow, an upstream the configuration never declared.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkSidecarConfig, parseSidecarConfig } from "../../src/server/index.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { REPO_ROOT } from "../helpers/repo.js";
import { type Sidecar, startTestSidecar, TOKENS } from "./harness.js";

const MCP_SERVER = join(REPO_ROOT, "test", "fixtures", "executors", "mcp-server.mjs");

const POLICY = `
name: parity
version: "1.0"
rules:
  - { id: file-read, name: reads, priority: 100, match: { toolClass: file, action: read }, decision: allow, reason: ok }
  - { id: file-write, name: writes, priority: 110, match: { toolClass: file, action: write }, decision: allow, reason: ok }
  - { id: db-query, name: queries, priority: 120, match: { toolClass: database, action: query }, decision: allow, reason: ok }
  - { id: db-mutate, name: no writes, priority: 130, match: { toolClass: database, action: mutate }, decision: deny, reason: read only }
  - { id: mcp, name: mcp calls, priority: 140, match: { toolClass: mcp, action: call }, decision: allow, reason: ok }
`;

const contract = (
  name: string,
  server: string,
  tool: string,
  args: string,
  schema = '{ type = "object" }',
) => `
[tool]
name = "${name}"
version = "1.0.0"
description = "parity tool ${name}"
timeout_seconds = 10
${args}
[mcp]
server = "${server}"
tool = "${tool}"

[output]
format = "json"
schema = ${schema}
`;

const PATH_ARG = `[args.path]\ntype = "path"\nrequired = true\n`;
const LOOSE_PATH_ARG = `[args.path]\ntype = "string"\nrequired = true\nmax_length = 200\n`;
const ID_ARG = `[args.id]\ntype = "integer"\nrequired = true\nmin = 0\nmax = 1000000\n`;
const NAME_ARG = `[args.name]\ntype = "string"\nrequired = true\nmax_length = 200\n`;

const CONTRACTS: Record<string, string> = {
  read_note: contract("read_note", "warden.file", "read", PATH_ARG, '{ type = "string" }'),
  read_loose: contract("read_loose", "warden.file", "read", LOOSE_PATH_ARG, '{ type = "string" }'),
  write_note: contract(
    "write_note",
    "warden.file",
    "write",
    `${PATH_ARG}[args.content]\ntype = "string"\nrequired = true\nmax_length = 1000\n`,
  ),
  order_by_id: contract("order_by_id", "warden.database", "order_by_id", ID_ARG),
  order_by_name: contract("order_by_name", "warden.database", "order_by_name", NAME_ARG),
  sneaky_delete: contract("sneaky_delete", "warden.database", "sneaky_delete", ID_ARG),
  order_delete: contract("order_delete", "warden.database", "order_delete", ID_ARG),
  pg_order: contract("pg_order", "warden.database", "pg_order", ID_ARG),
  mcp_add: contract(
    "mcp_add",
    "test",
    "add",
    `[args.a]\ntype = "number"\nrequired = true\n[args.b]\ntype = "number"\nrequired = true\n`,
  ),
  ghost: contract("ghost", "ghost", "anything", NAME_ARG),
};

let dir: string;
let pgServer: PostgresServer;
let s: Sidecar;

function executors() {
  return {
    file: { root: join(dir, "data") },
    database: {
      connections: {
        shop: { engine: "sqlite" as const, path: join(dir, "shop.db") },
        pgshop: { engine: "postgres" as const, url: "env:WARDEN_PARITY_PG_URL" },
      },
      statements: {
        order_by_id: { connection: "shop", sql: "SELECT id, item FROM orders WHERE id = ?", params: ["id"] },
        order_by_name: {
          connection: "shop",
          sql: "SELECT id, item FROM orders WHERE item = ?",
          params: ["name"],
        },
        // Declared as a query, but the SQL deletes: the executor refuses the class mismatch.
        sneaky_delete: { connection: "shop", sql: "DELETE FROM orders WHERE id = ?", params: ["id"] },
        order_delete: {
          connection: "shop",
          sql: "DELETE FROM orders WHERE id = ?",
          params: ["id"],
          action: "mutate" as const,
        },
        pg_order: { connection: "pgshop", sql: "SELECT id, item FROM orders WHERE id = $1", params: ["id"] },
      },
    },
    mcp: {
      upstreams: { test: { command: process.execPath, args: [MCP_SERVER], cwd: REPO_ROOT } },
      pins: join(dir, "mcp-pins.json"),
    },
  };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "warden-parity-"));
  mkdirSync(join(dir, "data"));
  mkdirSync(join(dir, "contracts"));
  writeFileSync(join(dir, "data", "note.txt"), "hello from the root");
  writeFileSync(join(dir, "secret.txt"), "TOP-SECRET-OUTSIDE-ROOT");
  symlinkSync(join(dir, "secret.txt"), join(dir, "data", "link.txt"));
  for (const [name, text] of Object.entries(CONTRACTS))
    writeFileSync(join(dir, "contracts", `${name}.clad.toml`), text);
  const db = new Database(join(dir, "shop.db"));
  db.exec(
    "CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT); INSERT INTO orders VALUES (1, 'lamp'), (2, 'desk');",
  );
  db.close();
  pgServer = await startPostgres();
  const c = new pg.Client({ connectionString: pgServer.connectionString });
  await c.connect();
  await c.query(
    "CREATE TABLE orders (id integer primary key, item text); INSERT INTO orders VALUES (7, 'chair')",
  );
  await c.end();
  process.env.WARDEN_PARITY_PG_URL = pgServer.connectionString;
  s = await startTestSidecar({
    policy: POLICY,
    config: { contracts: join(dir, "contracts"), executors: executors() },
  });
}, 120_000);

afterAll(async () => {
  await s?.stop();
  await pgServer?.stop();
  delete process.env.WARDEN_PARITY_PG_URL;
  rmSync(dir, { recursive: true, force: true });
});

async function execute(tool: string, parameters: Record<string, unknown>, label = "parity") {
  return s.call("/v1/execute", {
    token: TOKENS.agentA,
    body: { runId: await s.run(label), tool, parameters },
  });
}
const result = (r: { body: Record<string, unknown> }) => r.body.result as Record<string, unknown>;

describe("file executor through /v1/execute", () => {
  it("reads a file under the configured root, classified file/read", async () => {
    const r = await execute("read_note", { path: "note.txt" });
    expect(r.status).toBe(200);
    expect(r.body.decision).toBe("allow");
    expect(result(r)).toMatchObject({ ok: true, output: "hello from the root" });
  });

  it("writes a file, then reads it back", async () => {
    const w = await execute("write_note", { path: "out.txt", content: "written via sidecar" });
    expect(result(w)).toMatchObject({ ok: true, output: { created: true } });
    const r = await execute("read_note", { path: "out.txt" });
    expect(result(r)).toMatchObject({ ok: true, output: "written via sidecar" });
  });

  it("an agent that asks for ../secret.txt is refused before any executor runs", async () => {
    const r = await execute("read_note", { path: "../secret.txt" }, "trav-1");
    expect(r.body.decision).toBe("deny");
    expect(r.body.evidenceId).toBeNull();
    expect(JSON.stringify(r.body)).not.toContain("TOP-SECRET");
  });

  it("a contract with a loose string path still cannot traverse: the file executor refuses", async () => {
    const r = await execute("read_loose", { path: "../secret.txt" }, "trav-2");
    expect(r.body.decision).toBe("allow");
    expect(result(r)).toMatchObject({ ok: false, code: "ERR_EXEC_PATH_TRAVERSAL" });
    const abs = await execute("read_loose", { path: join(dir, "secret.txt") }, "trav-2");
    expect(result(abs)).toMatchObject({ ok: false, code: "ERR_EXEC_PATH_OUTSIDE_ROOT" });
    expect(JSON.stringify([r.body, abs.body])).not.toContain("TOP-SECRET");
  });

  it("a symlink inside the root that points outside it is not followed", async () => {
    const r = await execute("read_loose", { path: "link.txt" }, "trav-3");
    expect(result(r)).toMatchObject({ ok: false, code: "ERR_EXEC_PATH_SYMLINK" });
    expect(JSON.stringify(r.body)).not.toContain("TOP-SECRET");
  });
});

describe("database executor through /v1/execute", () => {
  it("runs the declared SQLite statement with the contract's arguments bound", async () => {
    const r = await execute("order_by_id", { id: 1 });
    expect(r.body.decision).toBe("allow");
    expect(result(r)).toMatchObject({ ok: true, output: { rows: [{ id: 1, item: "lamp" }], changes: 0 } });
  });

  it("SQL smuggled into an argument is a bound value, never SQL", async () => {
    const r = await execute("order_by_name", { name: "x' OR '1'='1" });
    expect(result(r)).toMatchObject({ ok: true, output: { rows: [] } });
    const typed = await execute("order_by_id", { id: "1; DROP TABLE orders" }, "sql-2");
    expect(typed.body.decision).toBe("deny");
  });

  it("a statement declared as a query that deletes is refused by the executor (class mismatch)", async () => {
    const r = await execute("sneaky_delete", { id: 2 }, "sql-3");
    expect(r.body.decision).toBe("allow");
    expect(result(r)).toMatchObject({ ok: false, code: "ERR_EXEC_SQL_CLASS" });
    const still = await execute("order_by_id", { id: 2 }, "sql-3");
    expect(result(still)).toMatchObject({ ok: true, output: { rows: [{ id: 2, item: "desk" }] } });
  });

  it("a mutation is classified database/mutate, so the policy's deny applies", async () => {
    const r = await execute("order_delete", { id: 1 }, "sql-4");
    expect(r.body.decision).toBe("deny");
    expect(r.body.evidenceId).toBeNull();
  });

  it("runs a PostgreSQL statement on a connection whose url came from env:NAME", async () => {
    const r = await execute("pg_order", { id: 7 });
    expect(result(r)).toMatchObject({ ok: true, output: { rows: [{ id: 7, item: "chair" }] } });
  });
});

describe("MCP executor through /v1/execute", () => {
  it("calls a declared upstream's tool and taints the result mcp with its origin", async () => {
    const r = await execute("mcp_add", { a: 2, b: 3 });
    expect(r.body.decision).toBe("allow");
    expect(result(r)).toMatchObject({ ok: true, output: { content: [{ type: "text", text: "5" }] } });
    const taint = r.body.taint as { source: string; origin?: string }[];
    expect(taint).toContainEqual(expect.objectContaining({ source: "mcp", origin: "test/add" }));
  });

  it("a contract naming an upstream the configuration never declared is not executed", async () => {
    const r = await execute("ghost", { name: "x" }, "ghost");
    expect(r.status).toBe(422);
    expect((r.body.error as { code: string }).code).toBe("ERR_SERVER_NO_EXECUTOR");
    expect((r.body.error as { message: string }).message).toContain("ghost");
  });
});

describe("warden sidecar --check over the executor sections", () => {
  it("reports the undeclared upstream, the mis-declared statement and a missing env variable", async () => {
    const input = JSON.parse(JSON.stringify(s.loaded.config)) as Record<string, unknown>;
    const ex = executors();
    ex.database.connections.pgshop.url = "env:WARDEN_PARITY_UNSET_VARIABLE";
    const loaded = parseSidecarConfig({ ...input, executors: ex, gate: { ...s.loaded.gate.config } }, s.dir);
    const report = await checkSidecarConfig(loaded);
    expect(report.ok).toBe(false);
    const text = report.problems.map((p) => `${p.what}: ${p.message}`).join("\n");
    expect(text).toContain("contracts.ghost: no MCP upstream ghost is declared");
    expect(text).toContain(
      "executors.database.statements.sneaky_delete: a write statement declared as action query",
    );
    expect(text).toContain("WARDEN_PARITY_UNSET_VARIABLE is not set");
  });

  it("refuses a statement that names an undeclared connection", () => {
    const ex = executors();
    (ex.database.statements.order_by_id as { connection: string }).connection = "nowhere";
    expect(() =>
      parseSidecarConfig(
        { ...JSON.parse(JSON.stringify(s.loaded.config)), executors: ex, gate: { ...s.loaded.gate.config } },
        s.dir,
      ),
    ).toThrow(/connection nowhere is not declared/);
  });
});
