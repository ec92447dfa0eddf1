// A conservative SQL statement classifier, run before execution so that policy
// can tell `query` from `mutate` and the executor can refuse a mismatch. It reads
// the statement through the dialect's tokenizer (sql-tokenize.ts), so a keyword
// hidden in a comment, literal or quoted identifier cannot change the verdict and
// comment/statement boundaries are the engine's own; anything the tokenizer cannot
// read is refused. It refuses more than one statement and errs towards "write":
// anything it does not recognise as a read is a write. Engines cross-check it
// (SQLite's stmt.readonly, PostgreSQL READ ONLY transactions), so a misclassified
// read still cannot write.
import { type SqlDialect, type SqlToken, tokenizeSql } from "./sql-tokenize.js";

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

interface Word {
  word: string;
  /** Followed by `(`: a function call, not a keyword. */
  call: boolean;
}

const isPunct = (t: SqlToken | undefined, c: string): boolean => t?.kind === "punct" && t.char === c;

/** The one statement's tokens, or a refusal for none or several. */
function singleStatement(tokens: readonly SqlToken[]): SqlClassification | SqlToken[] {
  const statements: SqlToken[][] = [[]];
  for (const t of tokens) {
    if (isPunct(t, ";")) statements.push([]);
    else (statements[statements.length - 1] as SqlToken[]).push(t);
  }
  const nonEmpty = statements.filter((s) => s.length > 0);
  if (nonEmpty.length === 0) return { ok: false, code: "ERR_EXEC_SQL_SYNTAX", message: "empty statement" };
  if (nonEmpty.length > 1) {
    return { ok: false, code: "ERR_EXEC_SQL_MULTIPLE", message: "exactly one statement is allowed" };
  }
  return nonEmpty[0] as SqlToken[];
}

/** Classifies one statement as the engine of `dialect` will read it. */
export function classifySql(sql: string, dialect: SqlDialect): SqlClassification {
  const lexed = tokenizeSql(sql, dialect);
  if (!lexed.ok) return { ok: false, code: "ERR_EXEC_SQL_SYNTAX", message: lexed.message };
  const statement = singleStatement(lexed.tokens);
  if (!Array.isArray(statement)) return statement;
  const words: Word[] = [];
  statement.forEach((t, i) => {
    if (t.kind === "word") words.push({ word: t.upper, call: isPunct(statement[i + 1], "(") });
  });
  const first = statement[0]?.kind === "word" ? statement[0].upper : undefined;
  if (first === undefined) return { ok: false, code: "ERR_EXEC_SQL_SYNTAX", message: "no statement keyword" };

  let cls: StatementClass;
  if (DDL_WORDS.has(first)) cls = "ddl";
  else if (first === "PRAGMA") {
    // PRAGMA [schema.]name [= value | (value)]
    const dotted = statement.some((t) => isPunct(t, "."));
    const pragmaName = (dotted ? words[2]?.word : words[1]?.word) ?? "";
    const hasArg = statement.some((t) => isPunct(t, "=") || isPunct(t, "("));
    cls = !hasArg || READ_PRAGMAS.has(pragmaName) ? "read" : "write";
  } else if (first === "EXPLAIN") {
    // EXPLAIN ANALYZE runs the statement.
    cls = words.some((w) => w.word === "ANALYZE" || w.word === "ANALYSE") ? "write" : "read";
  } else if (READ_WORDS.has(first)) cls = "read";
  else cls = "write";

  if (first !== "PRAGMA" && first !== "EXPLAIN") cls = scanReadStatement(words, first, cls);
  return { ok: true, class: cls, keyword: first };
}

/**
 * Inside a read-looking statement, only reserved words can flip the verdict
 * (data-modifying CTEs, row locks, SELECT INTO): column names cannot collide.
 */
function scanReadStatement(words: readonly Word[], first: string, start: StatementClass): StatementClass {
  let cls = start;
  words.slice(1).forEach(({ word, call }, i) => {
    if (call) return;
    let found: StatementClass | undefined;
    if (SCAN_DDL.has(word)) found = "ddl";
    else if (SCAN_WRITE.has(word)) found = "write";
    else if (word === "SHARE" && /^(FOR|KEY)$/.test(words[i]?.word ?? "")) found = "write";
    else if (word === "INTO" && first === "SELECT") found = "ddl";
    if (found !== undefined && RANK[found] > RANK[cls]) cls = found;
  });
  return cls;
}
