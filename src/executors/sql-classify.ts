// A conservative SQL statement classifier, run before execution so that policy
// can tell `query` from `mutate` and the executor can refuse a mismatch. It
// strips comments, string literals and quoted identifiers first (so a keyword
// hidden in a literal cannot change the verdict), refuses more than one
// statement, and errs towards "write": anything it does not recognise as a
// read is a write. Engines cross-check it (SQLite's stmt.readonly, PostgreSQL
// READ ONLY transactions), so a misclassified read still cannot write.

export type StatementClass = "read" | "write" | "ddl";

export type SqlClassification =
  | { ok: true; class: StatementClass; keyword: string }
  | { ok: false; code: "ERR_EXEC_SQL_MULTIPLE" | "ERR_EXEC_SQL_SYNTAX"; message: string };

const SCAN_WRITE = new Set(["INSERT", "UPDATE", "DELETE", "MERGE", "REPLACE", "UPSERT"]);
const SCAN_DDL = new Set(["CREATE", "ALTER", "DROP"]);
const DDL_WORDS = new Set(["CREATE", "ALTER", "DROP", "ATTACH", "DETACH", "COMMENT", "RENAME"]);
const READ_WORDS = new Set(["SELECT", "VALUES", "TABLE", "SHOW", "WITH", "EXPLAIN", "PRAGMA"]);
/** PRAGMAs that take an argument but only read. */
const READ_PRAGMAS = new Set([
  "TABLE_INFO",
  "TABLE_XINFO",
  "TABLE_LIST",
  "INDEX_LIST",
  "INDEX_INFO",
  "INDEX_XINFO",
  "FOREIGN_KEY_LIST",
  "FOREIGN_KEY_CHECK",
  "INTEGRITY_CHECK",
  "QUICK_CHECK",
]);

const RANK: Record<StatementClass, number> = { read: 0, write: 1, ddl: 2 };

/** Replaces comments with a space and literals / quoted identifiers with placeholders. */
export function stripSql(sql: string): { ok: true; text: string } | { ok: false; message: string } {
  let out = "";
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i] as string;
    const next = sql[i + 1];
    if (c === "-" && next === "-") {
      const end = sql.indexOf("\n", i);
      i = end < 0 ? n : end + 1;
      out += " ";
      continue;
    }
    if (c === "/" && next === "*") {
      // PostgreSQL block comments nest.
      let depth = 1;
      i += 2;
      while (i < n && depth > 0) {
        if (sql[i] === "/" && sql[i + 1] === "*") {
          depth++;
          i += 2;
        } else if (sql[i] === "*" && sql[i + 1] === "/") {
          depth--;
          i += 2;
        } else i++;
      }
      if (depth > 0) return { ok: false, message: "unterminated block comment" };
      out += " ";
      continue;
    }
    if (c === "'" || ((c === "E" || c === "e") && next === "'")) {
      const escapes = c !== "'";
      i += escapes ? 2 : 1;
      let closed = false;
      while (i < n) {
        const d = sql[i];
        if (escapes && d === "\\") {
          i += 2;
          continue;
        }
        if (d === "'") {
          if (sql[i + 1] === "'") {
            i += 2;
            continue;
          }
          i++;
          closed = true;
          break;
        }
        i++;
      }
      if (!closed) return { ok: false, message: "unterminated string literal" };
      out += " '' ";
      continue;
    }
    if (c === '"' || c === "`" || c === "[") {
      const close = c === "[" ? "]" : c;
      i++;
      let closed = false;
      while (i < n) {
        if (sql[i] === close) {
          if (close !== "]" && sql[i + 1] === close) {
            i += 2;
            continue;
          }
          i++;
          closed = true;
          break;
        }
        i++;
      }
      if (!closed) return { ok: false, message: "unterminated quoted identifier" };
      out += " _ident_ ";
      continue;
    }
    if (c === "$") {
      const m = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i));
      if (m !== null) {
        const tag = m[0];
        const end = sql.indexOf(tag, i + tag.length);
        if (end < 0) return { ok: false, message: "unterminated dollar-quoted string" };
        i = end + tag.length;
        out += " '' ";
        continue;
      }
    }
    out += c;
    i++;
  }
  return { ok: true, text: out };
}

export function classifySql(sql: string): SqlClassification {
  const stripped = stripSql(sql);
  if (!stripped.ok) return { ok: false, code: "ERR_EXEC_SQL_SYNTAX", message: stripped.message };
  const parts = stripped.text.split(";").filter((p) => p.trim() !== "");
  if (parts.length === 0) return { ok: false, code: "ERR_EXEC_SQL_SYNTAX", message: "empty statement" };
  if (parts.length > 1) {
    return { ok: false, code: "ERR_EXEC_SQL_MULTIPLE", message: "exactly one statement is allowed" };
  }
  const text = parts[0] as string;
  const words: { word: string; call: boolean }[] = [];
  for (const m of text.matchAll(/[A-Za-z_][A-Za-z0-9_]*/g)) {
    const after = text.slice((m.index ?? 0) + m[0].length).trimStart();
    words.push({ word: m[0].toUpperCase(), call: after.startsWith("(") });
  }
  const first = words[0]?.word;
  if (first === undefined) return { ok: false, code: "ERR_EXEC_SQL_SYNTAX", message: "no statement keyword" };

  let cls: StatementClass;
  if (DDL_WORDS.has(first)) cls = "ddl";
  else if (first === "PRAGMA") {
    // PRAGMA [schema.]name [= value | (value)]
    const pragmaName = (text.includes(".") ? words[2]?.word : words[1]?.word) ?? "";
    const hasArg = /[=(]/.test(text);
    cls = !hasArg || READ_PRAGMAS.has(pragmaName) ? "read" : "write";
  } else if (first === "EXPLAIN") {
    // EXPLAIN ANALYZE runs the statement.
    cls = words.some((w) => w.word === "ANALYZE" || w.word === "ANALYSE") ? "write" : "read";
  } else if (READ_WORDS.has(first)) cls = "read";
  else cls = "write";

  if (first !== "PRAGMA" && first !== "EXPLAIN") {
    // Inside a read-looking statement, only reserved words can flip the verdict
    // (data-modifying CTEs, row locks, SELECT INTO): column names cannot collide.
    words.slice(1).forEach(({ word, call }, i) => {
      if (call) return;
      let found: StatementClass | undefined;
      if (SCAN_DDL.has(word)) found = "ddl";
      else if (SCAN_WRITE.has(word)) found = "write";
      else if (word === "SHARE" && words[i]?.word !== undefined && /^(FOR|KEY)$/.test(words[i]?.word ?? "")) {
        found = "write";
      } else if (word === "INTO" && first === "SELECT") found = "ddl";
      if (found !== undefined && RANK[found] > RANK[cls]) cls = found;
    });
  }
  return { ok: true, class: cls, keyword: first };
}
