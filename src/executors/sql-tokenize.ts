// A SQL tokenizer per dialect, written after the engines' own lexers (PostgreSQL's
// scan.l, SQLite's tokenize.c) so that statement and comment boundaries are the ones the
// engine will see. It is deliberately narrower than the engines: any construct whose
// boundaries could depend on something the tokenizer cannot see (a server setting, an
// engine version, a TCL-only parameter form) or that the engine would reject anyway is
// refused, and the caller fails closed. It never throws on any input.

export type SqlDialect = "sqlite" | "postgres";

export type SqlToken =
  /** An unquoted word; `upper` is its ASCII-upper-cased form (engines fold ASCII only). */
  | { kind: "word"; upper: string }
  /** A quoted identifier, string, number or bind parameter: never a keyword. */
  | { kind: "ident" | "string" | "number" | "param" }
  /** One punctuation or operator character, `;` included. */
  | { kind: "punct"; char: string };

export type SqlTokens = { ok: true; tokens: SqlToken[] } | { ok: false; message: string };

type Step = { ok: true; end: number; token?: SqlToken } | { ok: false; message: string };

const isSpace = (c: string): boolean => c === " " || (c >= "\t" && c <= "\r");
const isDigit = (c: string | undefined): boolean => c !== undefined && c >= "0" && c <= "9";
const isIdentStart = (c: string | undefined): boolean =>
  c !== undefined && ((c >= "A" && c <= "Z") || (c >= "a" && c <= "z") || c === "_" || c >= "\u0080");
/** Both engines let `$` continue an identifier and treat every non-ASCII byte as a letter. */
const isIdentChar = (c: string | undefined): boolean => isIdentStart(c) || isDigit(c) || c === "$";

const PUNCT: Record<SqlDialect, string> = {
  postgres: ",()[].;:+-*/%^<>=~!@#&|`?",
  sqlite: ",().;+-*/%<>=~!&|",
};

const bad = (message: string): Step => ({ ok: false, message });

/** Splits `sql` into tokens for `dialect`, or says why it cannot do so safely. */
export function tokenizeSql(sql: string, dialect: SqlDialect): SqlTokens {
  const tokens: SqlToken[] = [];
  let i = 0;
  while (i < sql.length) {
    const step = scanOne(sql, i, dialect);
    if (!step.ok) return { ok: false, message: `${step.message} at offset ${i}` };
    if (step.token !== undefined) tokens.push(step.token);
    i = step.end;
  }
  return { ok: true, tokens };
}

function scanOne(sql: string, i: number, dialect: SqlDialect): Step {
  const c = sql[i] as string;
  const next = sql[i + 1];
  if (isSpace(c)) return { ok: true, end: i + 1 };
  if (c === "-" && next === "-") return lineComment(sql, i, dialect);
  if (c === "/" && next === "*") return blockComment(sql, i, dialect);
  if (c === "'") return quoted(sql, i + 1, "'", "string", dialect === "postgres");
  if (c === '"') return quoted(sql, i + 1, '"', "ident", false);
  if (isDigit(c) || (c === "." && isDigit(next))) return numberToken(sql, i);
  if (dialect === "sqlite") {
    if (c === "`") return quoted(sql, i + 1, "`", "ident", false);
    if (c === "[") return bracketIdent(sql, i + 1);
    if (c === "?" || c === "$" || c === "@" || c === ":" || c === "#") return sqliteParam(sql, i);
  } else if (c === "$") {
    return pgDollar(sql, i);
  }
  if (isIdentStart(c)) return word(sql, i, dialect);
  if (PUNCT[dialect].includes(c)) return { ok: true, end: i + 1, token: { kind: "punct", char: c } };
  return bad(`unexpected character U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`);
}

function lineComment(sql: string, i: number, dialect: SqlDialect): Step {
  // PostgreSQL ends a line comment at CR or LF, SQLite at LF only.
  let j = i + 2;
  while (j < sql.length && sql[j] !== "\n" && !(dialect === "postgres" && sql[j] === "\r")) j++;
  return { ok: true, end: j };
}

function blockComment(sql: string, i: number, dialect: SqlDialect): Step {
  // PostgreSQL nests block comments; SQLite ends one at the first `*/`. SQLite also
  // accepts a comment left open at the end of input: refused here, as in PostgreSQL.
  let depth = 1;
  let j = i + 2;
  while (j < sql.length) {
    if (sql[j] === "*" && sql[j + 1] === "/") {
      depth--;
      j += 2;
      if (depth === 0) return { ok: true, end: j };
    } else if (dialect === "postgres" && sql[j] === "/" && sql[j + 1] === "*") {
      depth++;
      j += 2;
    } else j++;
  }
  return bad("unterminated block comment");
}

/** The index just past the closing quote, or -1. `escapes`: a backslash quotes the next character. */
function quoteEnd(sql: string, from: number, q: string, escapes: boolean): number {
  let j = from;
  while (j < sql.length) {
    const d = sql[j];
    if (escapes && d === "\\") j += 2;
    else if (d === q) {
      if (sql[j + 1] !== q) return j + 1;
      j += 2;
    } else j++;
  }
  return -1;
}

function quoted(sql: string, from: number, q: string, kind: "string" | "ident", pgPlain: boolean): Step {
  const end = quoteEnd(sql, from, q, false);
  if (end < 0) return bad(`unterminated ${kind === "string" ? "string literal" : "quoted identifier"}`);
  // With standard_conforming_strings off, PostgreSQL reads backslashes in a plain string as
  // escapes. The session setting is not visible here: refuse a literal whose end would move.
  if (pgPlain && sql.slice(from, end).includes("\\") && quoteEnd(sql, from, q, true) !== end) {
    return bad(
      "a backslash makes this string's end depend on standard_conforming_strings (use E'' or a parameter)",
    );
  }
  return { ok: true, end, token: { kind } };
}

function bracketIdent(sql: string, from: number): Step {
  const end = sql.indexOf("]", from);
  return end < 0
    ? bad("unterminated quoted identifier")
    : { ok: true, end: end + 1, token: { kind: "ident" } };
}

function numberToken(sql: string, i: number): Step {
  const m = /^(0[xX][0-9A-Fa-f_]+|0[oO][0-7_]+|0[bB][01_]+|(\d[\d_]*)?(\.[\d_]*)?([eE][+-]?\d[\d_]*)?)/.exec(
    sql.slice(i, i + 256),
  );
  const len = m?.[0].length ?? 0;
  if (len === 0 || len >= 256) return bad("malformed number");
  const after = sql[i + len];
  // Both engines refuse junk glued to a number (`1e`, `12abc`, `1'x'`); so does this.
  if (isIdentChar(after) || after === "'" || after === '"' || after === ".") {
    return bad("a number runs into other characters");
  }
  return { ok: true, end: i + len, token: { kind: "number" } };
}

function word(sql: string, i: number, dialect: SqlDialect): Step {
  let j = i + 1;
  while (j < sql.length && isIdentChar(sql[j])) j++;
  const text = sql.slice(i, j);
  // PostgreSQL: E'…' is an escape string only when E starts the token.
  if (dialect === "postgres" && (text === "E" || text === "e") && sql[j] === "'") {
    const end = quoteEnd(sql, j + 1, "'", true);
    return end < 0 ? bad("unterminated string literal") : { ok: true, end, token: { kind: "string" } };
  }
  const upper = text.replace(/[a-z]+/g, (s) => s.toUpperCase());
  return { ok: true, end: j, token: { kind: "word", upper } };
}

function pgDollar(sql: string, i: number): Step {
  const param = /^\$\d+/.exec(sql.slice(i, i + 12));
  if (param !== null) {
    const after = sql[i + param[0].length];
    if (isIdentChar(after)) return bad("a parameter runs into other characters");
    return { ok: true, end: i + param[0].length, token: { kind: "param" } };
  }
  const open = /^\$([A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/.exec(sql.slice(i, i + 256));
  if (open === null) return bad("'$' starts neither a parameter nor a dollar-quoted string");
  const tag = open[0];
  const end = sql.indexOf(tag, i + tag.length);
  if (end < 0) return bad("unterminated dollar-quoted string");
  return { ok: true, end: end + tag.length, token: { kind: "string" } };
}

function sqliteParam(sql: string, i: number): Step {
  let j = i + 1;
  if (sql[i] === "?") {
    while (isDigit(sql[j])) j++;
  } else {
    while (j < sql.length && isIdentChar(sql[j])) j++;
    if (j === i + 1) return bad(`'${sql[i]}' must start a named parameter`);
    // SQLite's TCL-style suffixes `$a(…)` and `$a::b` may swallow any character, `;` too.
    if (sql[j] === "(" || (sql[j] === ":" && sql[j + 1] === ":")) {
      return bad("TCL-style parameter suffixes are not accepted");
    }
  }
  return { ok: true, end: j, token: { kind: "param" } };
}
