import Database from "better-sqlite3";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { classifySql, type SqlDialect, tokenizeSql } from "../../src/executors/index.js";

const DIALECTS: readonly SqlDialect[] = ["sqlite", "postgres"];

describe("SQL classifier", () => {
  it.each([
    ["SELECT * FROM users WHERE id = ?", "read"],
    ["  select name from users;", "read"],
    ["VALUES (1), (2)", "read"],
    ["WITH x AS (SELECT 1) SELECT * FROM x", "read"],
    ["SELECT replace(name, 'a', 'b') FROM users", "read"],
    ["SELECT CASE WHEN a THEN 1 END AS comment FROM t", "read"],
    ["SELECT 'DROP TABLE users; DELETE FROM x' AS s", "read"],
    ['SELECT "delete" FROM t', "read"],
    ["SELECT 1 -- ; DELETE FROM users", "read"],
    ["SELECT /* ; UPDATE users SET a=1 */ 1", "read"],
    ["EXPLAIN SELECT 1", "read"],
    ["PRAGMA user_version", "read"],
    ["PRAGMA table_info(users)", "read"],
    ["SHOW search_path", "read"],
    ["INSERT INTO users(name) VALUES (?)", "write"],
    ["UPDATE users SET name = ? WHERE id = ?", "write"],
    ["DELETE FROM users WHERE id = ?", "write"],
    ["REPLACE INTO users VALUES (1)", "write"],
    ["WITH d AS (DELETE FROM users RETURNING *) SELECT * FROM d", "write"],
    ["WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x", "write"],
    ["SELECT * FROM users FOR UPDATE", "write"],
    ["SELECT * FROM users FOR SHARE", "write"],
    ["PRAGMA user_version = 5", "write"],
    ["PRAGMA journal_mode(DELETE)", "write"],
    ["EXPLAIN ANALYZE DELETE FROM users", "write"],
    ["COPY users TO '/tmp/x'", "write"],
    ["VACUUM", "write"],
    ["FROBNICATE users", "write"],
    ["CREATE TABLE t(a int)", "ddl"],
    ["DROP TABLE users", "ddl"],
    ["ALTER TABLE users ADD COLUMN x int", "ddl"],
    ["ATTACH DATABASE '/tmp/evil.db' AS evil", "ddl"],
    ["SELECT * INTO newtable FROM users", "ddl"],
  ])("%s -> %s", (sql, cls) => {
    for (const dialect of DIALECTS) {
      const r = classifySql(sql, dialect);
      expect(r.ok && r.class, dialect).toBe(cls);
    }
  });

  it.each([
    ["SELECT 1; DELETE FROM users", "ERR_EXEC_SQL_MULTIPLE"],
    ["SELECT 1;DROP TABLE users;", "ERR_EXEC_SQL_MULTIPLE"],
    ["SELECT 'x'; SELECT 'y'", "ERR_EXEC_SQL_MULTIPLE"],
    ["SELECT 'unterminated", "ERR_EXEC_SQL_SYNTAX"],
    ["SELECT /* open", "ERR_EXEC_SQL_SYNTAX"],
    ['SELECT "open', "ERR_EXEC_SQL_SYNTAX"],
    ["   ;  ", "ERR_EXEC_SQL_SYNTAX"],
    ["-- only a comment", "ERR_EXEC_SQL_SYNTAX"],
  ])("refuses %s", (sql, code) => {
    for (const dialect of DIALECTS) {
      const r = classifySql(sql, dialect);
      expect(!r.ok && r.code, dialect).toBe(code);
    }
  });

  it("handles doubled quotes and E-strings", () => {
    expect(classifySql("SELECT 'it''s; DROP' FROM t", "sqlite")).toMatchObject({ ok: true, class: "read" });
    expect(classifySql("SELECT 'it''s; DROP' FROM t", "postgres")).toMatchObject({ ok: true, class: "read" });
    expect(classifySql("SELECT E'a\\'; DELETE FROM t' AS x", "postgres")).toMatchObject({
      ok: true,
      class: "read",
    });
    expect(classifySql("SELECT /* a /* nested; */ still; */ 1", "postgres")).toMatchObject({
      ok: true,
      class: "read",
    });
  });

  it("reads PostgreSQL dollar quotes and refuses an open one", () => {
    expect(classifySql("SELECT $$ INSERT INTO t $$", "postgres")).toMatchObject({ ok: true, class: "read" });
    expect(classifySql("SELECT $tag$ open", "postgres")).toMatchObject({
      ok: false,
      code: "ERR_EXEC_SQL_SYNTAX",
    });
  });
});

const refused = (sql: string, dialect: SqlDialect, code = "ERR_EXEC_SQL_SYNTAX") =>
  expect(classifySql(sql, dialect), `${dialect}: ${sql}`).toMatchObject({ ok: false, code });
const classed = (sql: string, dialect: SqlDialect, cls: string) =>
  expect(classifySql(sql, dialect), `${dialect}: ${sql}`).toMatchObject({ ok: true, class: cls });

describe("SQL classifier attacks (issue 17 #11)", () => {
  it("a nested block comment cannot hide DROP from the SQLite classifier", () => {
    const sql = "/* /* */ DROP TABLE users -- */ SELECT 1";
    classed(sql, "sqlite", "ddl");
    // The engine agrees: SQLite ends the comment at the first */ and sees a write.
    const db = new Database(":memory:");
    db.exec("CREATE TABLE users (id INTEGER)");
    expect(db.prepare(sql).readonly).toBe(false);
    db.close();
    // PostgreSQL nests comments: there the whole DROP is inside one comment.
    classed(sql, "postgres", "read");
  });

  it("a nested block comment cannot hide a stacked statement from SQLite", () => {
    refused("SELECT 1 /* /* */ ; DROP TABLE users; */", "sqlite", "ERR_EXEC_SQL_MULTIPLE");
    classed("SELECT 1 /* /* */ ; DROP TABLE users; */", "postgres", "read");
  });

  it("a PostgreSQL dollar quote does not exist in SQLite", () => {
    const sql = "SELECT $a$, 1; DROP TABLE users; SELECT $a$";
    refused(sql, "sqlite", "ERR_EXEC_SQL_MULTIPLE");
    classed(sql, "postgres", "read");
    // In SQLite `$$` is a bind parameter named "$", as the engine itself says.
    classed("SELECT $$", "sqlite", "read");
  });

  it("an E'' escape string does not exist in SQLite", () => {
    refused("SELECT E'\\'; DROP TABLE users; --'", "sqlite", "ERR_EXEC_SQL_MULTIPLE");
    classed("SELECT E'\\'; DROP TABLE users; --'", "postgres", "read");
  });

  it("an identifier ending in E cannot turn a plain string into an escape string", () => {
    refused("SELECT namE'\\' ; DROP TABLE users; --'", "postgres");
  });

  it("a backslash in a plain PostgreSQL string whose end depends on the server setting is refused", () => {
    refused("SELECT '\\'; DROP TABLE users; --'", "postgres");
    // A backslash that cannot move the end is fine.
    classed("SELECT * FROM t WHERE a LIKE 'x\\_y'", "postgres", "read");
  });

  it("a number glued to E'' cannot open an escape string", () => {
    refused("SELECT 1e'\\' ; DROP TABLE users; --'", "postgres");
    refused("SELECT 12abc", "sqlite");
  });

  it("a backtick is not a quote in PostgreSQL", () => {
    refused("SELECT `a; DROP TABLE users; --`", "postgres", "ERR_EXEC_SQL_MULTIPLE");
    classed("SELECT `a; b` FROM t", "sqlite", "read");
  });

  it("square brackets quote identifiers in SQLite and are subscripts in PostgreSQL", () => {
    classed("SELECT [a;b] FROM t", "sqlite", "read");
    classed("SELECT ARRAY['];DROP TABLE t;--']", "postgres", "read");
    classed("SELECT arr[1] FROM t", "postgres", "read");
  });

  it("quoted identifiers with ';' stay one statement", () => {
    for (const d of DIALECTS) classed('SELECT "a;b" FROM "t;DROP TABLE x"', d, "read");
  });

  it("a carriage return ends a PostgreSQL line comment", () => {
    refused("SELECT 1 -- x\r; DROP TABLE users", "postgres", "ERR_EXEC_SQL_MULTIPLE");
    classed("SELECT 1 -- x\r; DROP TABLE users", "sqlite", "read");
  });

  it("a TCL-style SQLite parameter cannot swallow a ';'", () => {
    refused("SELECT $a(;DROP)", "sqlite");
    refused("SELECT :a::b", "sqlite");
    classed("SELECT * FROM t WHERE a = :a AND b = @b AND c = $c AND d = ?1", "sqlite", "read");
  });

  it("unterminated quotes and comments fail closed with a coded error", () => {
    for (const d of DIALECTS) {
      for (const sql of ["SELECT 'x", 'SELECT "x', "SELECT 1 /* x", "SELECT 1 /* /* */"]) {
        if (d === "sqlite" && sql.endsWith("/* */")) continue;
        refused(sql, d);
      }
    }
    refused("SELECT 1 /* /* */", "postgres");
    refused("SELECT [x", "sqlite");
    refused("SELECT `x", "sqlite");
    refused("SELECT E'x\\'", "postgres");
    refused("SELECT $q$ x $Q$", "postgres");
  });

  it("comments cannot hide keywords or statements", () => {
    for (const d of DIALECTS) {
      classed("SELECT/**/1/**/FROM t", d, "read");
      classed("WITH x AS (SELECT 1)/* */DELETE FROM t", d, "write");
      refused("SELECT 1/*;*/;/**/DROP TABLE t", d, "ERR_EXEC_SQL_MULTIPLE");
      classed("SELECT 1 FROM t --\n FOR UPDATE", d, "write");
    }
  });

  it("keywords are ASCII: a Unicode look-alike is an identifier, not SELECT", () => {
    // U+017F LATIN SMALL LETTER LONG S upper-cases to 'S' in JavaScript, never in an engine.
    for (const d of DIALECTS)
      expect(classifySql("\u017felect 1", d)).toMatchObject({ ok: true, class: "write" });
  });

  it("characters the engines cannot lex are refused", () => {
    for (const d of DIALECTS) {
      refused("SELECT 1 \\ 2", d);
      refused("SELECT {1}", d);
      refused("SELECT 1\u0000", d);
    }
  });
});

const FRAGMENTS = [
  "SELECT ",
  "DROP TABLE t",
  "DELETE FROM t",
  " ",
  "\n",
  "\r",
  "\t",
  "1",
  "a",
  "E",
  "x",
  ";",
  ",",
  "'",
  '"',
  "`",
  "[",
  "]",
  "(",
  ")",
  "/*",
  "*/",
  "--",
  "$",
  "$a",
  "$$",
  ":",
  "@",
  "?",
  "\\",
  "e'",
  "\u00e9",
  "\u017f",
  ".",
  "=",
  "*",
  "/",
  "-",
];
const sqlish = fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 24 }).map((a) => a.join(""));
const anyText = fc.oneof(sqlish, fc.string({ unit: "binary", maxLength: 64 }), fc.string({ maxLength: 64 }));

describe("SQL tokenizer properties", () => {
  it("never throws, and anything it cannot tokenize is refused with a code", () => {
    fc.assert(
      fc.property(anyText, fc.constantFrom(...DIALECTS), (sql, dialect) => {
        const lexed = tokenizeSql(sql, dialect);
        const r = classifySql(sql, dialect);
        if (!lexed.ok) expect(r).toMatchObject({ ok: false, code: "ERR_EXEC_SQL_SYNTAX" });
        if (!r.ok) expect(["ERR_EXEC_SQL_SYNTAX", "ERR_EXEC_SQL_MULTIPLE"]).toContain(r.code);
      }),
      { numRuns: 3000 },
    );
  });

  it("agrees with SQLite itself: one statement means one, and 'read' means read-only", () => {
    const db = new Database(":memory:");
    db.exec("CREATE TABLE t (a INTEGER, x INTEGER, e INTEGER)");
    fc.assert(
      fc.property(sqlish, (sql) => {
        const r = classifySql(sql, "sqlite");
        if (!r.ok) return;
        let stmt: Database.Statement;
        try {
          stmt = db.prepare(sql);
        } catch (e) {
          expect(String(e)).not.toContain("more than one statement");
          return;
        }
        if (r.class === "read") expect(stmt.readonly, sql).toBe(true);
      }),
      { numRuns: 3000 },
    );
    db.close();
  });
});
