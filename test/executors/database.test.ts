import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type DatabaseBinding,
  EvidenceEnvelope,
  PostgresExecutor,
  rawOutputHash,
  SqliteExecutor,
  type SqlSpec,
} from "../../src/executors/index.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { mint } from "./helpers.js";

/** A contract's statement template: fixed SQL, parameters bound by name from the ticket. */
function binding(sql: string, paramNames: string[] = []): DatabaseBinding {
  return {
    name: "db",
    version: "1.0.0",
    build: (p): SqlSpec => ({ sql, params: paramNames.map((n) => (p[n] ?? null) as string | number | null) }),
  };
}

interface Engine {
  exec: SqliteExecutor | PostgresExecutor;
  placeholder(i: number): string;
  count(): Promise<number>;
}

const INJECTIONS = [
  "' OR '1'='1",
  "1; DROP TABLE users; --",
  "x'); DELETE FROM users; --",
  "' UNION SELECT name, name FROM users --",
  "\\'; DROP TABLE users; --",
];

function suite(
  name: string,
  setup: () => Promise<Engine>,
  teardown: () => Promise<void>,
  extra?: () => void,
) {
  describe(`${name} executor`, () => {
    let e: Engine;
    beforeAll(async () => {
      e = await setup();
    });
    afterAll(teardown);

    const q = (sql: string, names: string[], params: Record<string, unknown>, action = "query") =>
      e.exec.execute(mint("db", params, { toolClass: "database", action }), binding(sql, names));

    it("runs a bound query and records evidence", async () => {
      const ex = e.exec;
      const r = await ex.execute(
        mint("db", { name: "alice" }, { toolClass: "database", action: "query" }),
        binding(`SELECT id, name FROM users WHERE name = ${e.placeholder(1)}`, ["name"]),
      );
      if (!r.ok) throw new Error(`${r.code} ${r.message}`);
      expect(r.output.rows).toEqual([{ id: 1, name: "alice" }]);
      expect(r.output.statementClass).toBe("read");
      const ev = EvidenceEnvelope.parse(r.evidence);
      expect(ev.invocation).toMatchObject({ kind: "database", statement_class: "read", param_count: 1 });
      expect(ev.output_hash).toBe(rawOutputHash(Buffer.from(JSON.stringify([{ id: 1, name: "alice" }]))));
    });

    it("runs a mutation for a mutate ticket", async () => {
      const r = await q(
        `INSERT INTO users(id, name) VALUES (${e.placeholder(1)}, ${e.placeholder(2)})`,
        ["id", "name"],
        { id: 10, name: "temp" },
        "mutate",
      );
      expect(r.ok && r.output.changes).toBe(1);
      const d = await q(`DELETE FROM users WHERE id = ${e.placeholder(1)}`, ["id"], { id: 10 }, "mutate");
      expect(d.ok && d.output.changes).toBe(1);
    });

    it.each(INJECTIONS)("SQL injection through a parameter stays a value: %s", async (payload) => {
      const before = await e.count();
      const r = await q(`SELECT id FROM users WHERE name = ${e.placeholder(1)}`, ["name"], { name: payload });
      if (!r.ok) throw new Error(r.code);
      expect(r.output.rows).toEqual([]);
      const w = await q(
        `UPDATE users SET name = name WHERE name = ${e.placeholder(1)}`,
        ["name"],
        { name: payload },
        "mutate",
      );
      expect(w.ok && w.output.changes).toBe(0);
      expect(await e.count()).toBe(before);
    });

    it("refuses a write statement for a query ticket", async () => {
      const r = await q("DELETE FROM users", [], {}, "query");
      expect(!r.ok && r.code).toBe("ERR_EXEC_SQL_CLASS");
      expect(await e.count()).toBe(3);
    });

    it("refuses DDL for a mutate ticket and any statement for an unknown action", async () => {
      expect(await q("DROP TABLE users", [], {}, "mutate").then((r) => !r.ok && r.code)).toBe(
        "ERR_EXEC_SQL_CLASS",
      );
      expect(await q("SELECT 1", [], {}, "exfiltrate").then((r) => !r.ok && r.code)).toBe(
        "ERR_EXEC_SQL_CLASS",
      );
    });

    it("refuses stacked statements in a template", async () => {
      const r = await q("SELECT 1; DROP TABLE users", [], {});
      expect(!r.ok && r.code).toBe("ERR_EXEC_SQL_MULTIPLE");
      expect(await e.count()).toBe(3);
    });

    it("caps rows", async () => {
      const r = await q("SELECT * FROM many", [], {});
      expect(!r.ok && r.code).toBe("ERR_EXEC_SQL_ROW_LIMIT");
    });

    it("refuses non-scalar parameters and reports parameter count mismatches", async () => {
      const ex = e.exec;
      const obj = await ex.execute(mint("db", {}, { toolClass: "database", action: "query" }), {
        name: "db",
        version: "1.0.0",
        build: () => ({ sql: `SELECT ${e.placeholder(1)}`, params: [{ evil: true } as unknown as string] }),
      });
      expect(!obj.ok && obj.code).toBe("ERR_EXEC_SQL_PARAMS");
      const wrongCount = await ex.execute(mint("db", {}, { toolClass: "database", action: "query" }), {
        name: "db",
        version: "1.0.0",
        build: () => ({ sql: `SELECT ${e.placeholder(1)}`, params: [1, 2] }),
      });
      expect(!wrongCount.ok && wrongCount.code).toBe("ERR_EXEC_SQL_PARAMS");
    });

    extra?.();
  });
}

// SQLite
let sqliteDir = "";
suite(
  "SQLite",
  async () => {
    sqliteDir = mkdtempSync(join(tmpdir(), "warden-sqlite-"));
    const path = join(sqliteDir, "app.db");
    const db = new Database(path);
    db.exec("CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE many(x INTEGER);");
    db.prepare("INSERT INTO users VALUES (?, ?)").run(1, "alice");
    db.prepare("INSERT INTO users VALUES (?, ?)").run(2, "bob");
    db.prepare("INSERT INTO users VALUES (?, ?)").run(3, "carol");
    const ins = db.prepare("INSERT INTO many VALUES (?)");
    for (let i = 0; i < 20; i++) ins.run(i);
    db.close();
    const exec = new SqliteExecutor({ path, maxRows: 10 });
    return {
      exec,
      placeholder: () => "?",
      count: async () => {
        const d = new Database(path, { readonly: true });
        const n = (d.prepare("SELECT count(*) AS n FROM users").get() as { n: number }).n;
        d.close();
        return n;
      },
    };
  },
  async () => rmSync(sqliteDir, { recursive: true, force: true }),
);

describe("SQLite executor: extra guards", () => {
  it("refuses ATTACH for an ordinary mutate ticket", async () => {
    const dir = mkdtempSync(join(tmpdir(), "warden-sqlite-"));
    const path = join(dir, "x.db");
    new Database(path).exec("CREATE TABLE t(a)").close();
    const ex = new SqliteExecutor({ path });
    const r = await ex.execute(
      mint("db", { f: join(dir, "evil.db") }, { toolClass: "database", action: "mutate" }),
      binding("ATTACH DATABASE ? AS evil", ["f"]),
    );
    expect(!r.ok && r.code).toBe("ERR_EXEC_SQL_CLASS");
    ex.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("rejects a missing database file", () => {
    expect(() => new SqliteExecutor({ path: "/nonexistent/x.db" })).toThrowError(
      expect.objectContaining({ code: "ERR_EXEC_CONFIG_INVALID" }),
    );
  });
});

// PostgreSQL: a real server started for these tests (never skipped: no server = failure).
let server: PostgresServer | undefined;
let pool: pg.Pool | undefined;
suite(
  "PostgreSQL",
  async () => {
    server = await startPostgres();
    pool = new pg.Pool({ connectionString: server.connectionString, max: 4 });
    // The server is stopped at the end while idle clients may still be closing.
    pool.on("error", () => {});
    await pool.query("CREATE TABLE users(id int PRIMARY KEY, name text)");
    await pool.query("CREATE TABLE many(x int)");
    await pool.query("INSERT INTO users VALUES (1, 'alice'), (2, 'bob'), (3, 'carol')");
    await pool.query("INSERT INTO many SELECT generate_series(1, 20)");
    await pool.query("CREATE SEQUENCE s");
    const p = pool;
    return {
      exec: new PostgresExecutor({ pool: p, maxRows: 10 }),
      placeholder: (i) => `$${i}`,
      count: async () => Number((await p.query("SELECT count(*) AS n FROM users")).rows[0].n),
    };
  },
  async () => {
    await pool?.end();
    await server?.stop();
  },
  () => {
    it("a read with side effects is stopped by the READ ONLY transaction", async () => {
      if (pool === undefined) throw new Error("server not started");
      const ex = new PostgresExecutor({ pool });
      const r = await ex.execute(
        mint("db", {}, { toolClass: "database", action: "query" }),
        binding("SELECT nextval('s')"),
      );
      expect(!r.ok && r.code).toBe("ERR_EXEC_SQL_CLASS");
    });

    it("times out a long statement server-side and keeps the pool usable", async () => {
      if (pool === undefined) throw new Error("server not started");
      const ex = new PostgresExecutor({ pool });
      const r = await ex.execute(
        mint("db", {}, { toolClass: "database", action: "query" }),
        binding("SELECT pg_sleep(5)"),
        { timeoutMs: 200 },
      );
      expect(!r.ok && r.code).toBe("ERR_EXEC_TIMEOUT");
      const ok = await ex.execute(
        mint("db", {}, { toolClass: "database", action: "query" }),
        binding("SELECT 1 AS one"),
      );
      expect(ok.ok && ok.output.rows).toEqual([{ one: 1 }]);
    });
  },
);
