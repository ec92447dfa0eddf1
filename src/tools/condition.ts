// `when` conditionals of `[command.conditionals]`: a closed grammar parsed once at load
// time by a hand-written tokenizer and recursive-descent parser. No eval, no Function, no
// regex built from manifest text. Values compare as strings, as ToolClad defines them.
//
//   expr    := and ("or" and)*
//   and     := primary ("and" primary)*
//   primary := "(" expr ")" | operand ("==" | "!=") operand
//   operand := identifier | 'text' | "text" | number | true | false

export type Operand = { kind: "var"; name: string } | { kind: "lit"; value: string };

export type Condition =
  | { kind: "cmp"; op: "==" | "!="; left: Operand; right: Operand }
  | { kind: "and" | "or"; items: Condition[] };

type Token =
  | { t: "ident"; v: string }
  | { t: "str"; v: string }
  | { t: "op"; v: "==" | "!=" }
  | { t: "kw"; v: "and" | "or" }
  | { t: "(" | ")" };

const MAX_LENGTH = 1024;
const MAX_DEPTH = 16;

export type ConditionParse = { ok: true; condition: Condition } | { ok: false; message: string };

function tokenize(src: string): Token[] | string {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i] as string;
    if (c === " " || c === "\t") {
      i++;
    } else if (c === "(" || c === ")") {
      out.push({ t: c });
      i++;
    } else if ((c === "=" || c === "!") && src[i + 1] === "=") {
      out.push({ t: "op", v: c === "=" ? "==" : "!=" });
      i += 2;
    } else if (c === "'" || c === '"') {
      const end = src.indexOf(c, i + 1);
      if (end < 0) return `unterminated string starting at column ${i + 1}`;
      out.push({ t: "str", v: src.slice(i + 1, end) });
      i = end + 1;
    } else if (/[-0-9]/.test(c)) {
      const m = /^-?\d+(\.\d+)?/.exec(src.slice(i));
      if (!m) return `bad number at column ${i + 1}`;
      out.push({ t: "str", v: m[0] });
      i += m[0].length;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i)) as RegExpExecArray;
      const word = m[0];
      if (word === "and" || word === "or") out.push({ t: "kw", v: word });
      else if (word === "true" || word === "false") out.push({ t: "str", v: word });
      else out.push({ t: "ident", v: word });
      i += word.length;
    } else {
      return `unexpected character '${c}' at column ${i + 1}`;
    }
  }
  return out;
}

/** Parses a `when` expression; `isVariable` says which identifiers exist. */
export function parseCondition(src: string, isVariable: (name: string) => boolean): ConditionParse {
  if (src.length > MAX_LENGTH) return { ok: false, message: `longer than ${MAX_LENGTH} characters` };
  const tokens = tokenize(src);
  if (typeof tokens === "string") return { ok: false, message: tokens };
  let pos = 0;
  const peek = () => tokens[pos];
  const fail = (message: string): never => {
    throw new ConditionSyntax(message);
  };
  const operand = (): Operand => {
    const tok = tokens[pos++];
    if (tok?.t === "str") return { kind: "lit", value: tok.v };
    if (tok?.t === "ident") {
      if (!isVariable(tok.v)) fail(`unknown variable '${tok.v}'`);
      return { kind: "var", name: tok.v };
    }
    return fail("expected a variable or a literal");
  };
  const primary = (depth: number): Condition => {
    if (depth > MAX_DEPTH) fail(`nested deeper than ${MAX_DEPTH}`);
    if (peek()?.t === "(") {
      pos++;
      const inner = expr(depth + 1);
      if (peek()?.t !== ")") fail("expected ')'");
      pos++;
      return inner;
    }
    const left = operand();
    const op = tokens[pos++];
    if (op?.t !== "op") return fail("expected '==' or '!='");
    const right = operand();
    return { kind: "cmp", op: op.v, left, right };
  };
  const chain = (kw: "and" | "or", next: () => Condition): Condition => {
    const items = [next()];
    while (true) {
      const tok = peek();
      if (tok?.t !== "kw" || tok.v !== kw) break;
      pos++;
      items.push(next());
    }
    return items.length === 1 ? (items[0] as Condition) : { kind: kw, items };
  };
  const expr = (depth: number): Condition => chain("or", () => chain("and", () => primary(depth)));
  try {
    if (tokens.length === 0) fail("empty expression");
    const condition = expr(0);
    if (pos !== tokens.length) fail("unexpected trailing input");
    return { ok: true, condition };
  } catch (err) {
    if (err instanceof ConditionSyntax) return { ok: false, message: err.message };
    throw err;
  }
}

class ConditionSyntax extends Error {}

/** Evaluates against string forms of the variables; an unset variable is the empty string. */
export function evaluateCondition(cond: Condition, lookup: (name: string) => string | undefined): boolean {
  switch (cond.kind) {
    case "cmp": {
      const val = (o: Operand) => (o.kind === "lit" ? o.value : (lookup(o.name) ?? ""));
      const equal = val(cond.left) === val(cond.right);
      return cond.op === "==" ? equal : !equal;
    }
    case "and":
      return cond.items.every((c) => evaluateCondition(c, lookup));
    case "or":
      return cond.items.some((c) => evaluateCondition(c, lookup));
  }
}

/** Variables an expression reads (for load-time reference checks). */
export function conditionVariables(cond: Condition): string[] {
  if (cond.kind === "cmp") {
    return [cond.left, cond.right].flatMap((o) => (o.kind === "var" ? [o.name] : []));
  }
  return cond.items.flatMap(conditionVariables);
}
