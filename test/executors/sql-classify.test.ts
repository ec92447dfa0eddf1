import { describe, expect, it } from "vitest";
import { classifySql } from "../../src/executors/index.js";

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
    ["SELECT $$ INSERT INTO t $$", "read"],
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
    const r = classifySql(sql);
    expect(r.ok && r.class).toBe(cls);
  });

  it.each([
    ["SELECT 1; DELETE FROM users", "ERR_EXEC_SQL_MULTIPLE"],
    ["SELECT 1;DROP TABLE users;", "ERR_EXEC_SQL_MULTIPLE"],
    ["SELECT 'x'; SELECT 'y'", "ERR_EXEC_SQL_MULTIPLE"],
    ["SELECT 'unterminated", "ERR_EXEC_SQL_SYNTAX"],
    ["SELECT /* open", "ERR_EXEC_SQL_SYNTAX"],
    ['SELECT "open', "ERR_EXEC_SQL_SYNTAX"],
    ["SELECT $tag$ open", "ERR_EXEC_SQL_SYNTAX"],
    ["   ;  ", "ERR_EXEC_SQL_SYNTAX"],
    ["-- only a comment", "ERR_EXEC_SQL_SYNTAX"],
  ])("refuses %s", (sql, code) => {
    const r = classifySql(sql);
    expect(!r.ok && r.code).toBe(code);
  });

  it("handles doubled quotes and E-strings", () => {
    expect(classifySql("SELECT 'it''s; DROP' FROM t")).toMatchObject({ ok: true, class: "read" });
    expect(classifySql("SELECT E'a\\'; DELETE FROM t' AS x")).toMatchObject({ ok: true, class: "read" });
    expect(classifySql("SELECT /* a /* nested; */ still; */ 1")).toMatchObject({ ok: true, class: "read" });
  });
});
