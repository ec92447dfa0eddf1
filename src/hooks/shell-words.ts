// Words of the tree-sitter-bash tree as the shell will pass them (shell.ts): quote removal
// ('…', "…", $'…', $"…", backslashes), a leading ~ and $HOME / ${HOME} expanded, brace
// expansion of literal words ({a,b} → two words), and every other expansion marked `dynamic`
// with the scripts of its command and process substitutions kept as nested scripts.
import type { Node } from "web-tree-sitter";
import { type Script, ShellSyntaxError, type Word } from "./shell-model.js";

export interface WordContext {
  home: string;
  /** Converts the statements of a substitution into a nested script (shell-tree.ts). */
  sub: (nodes: Node[]) => Script;
  /** Where this word's nested scripts go. */
  nested: Script[];
}

const kids = (n: Node): Node[] => n.children.filter((c): c is Node => c !== null);
const named = (n: Node): Node[] => kids(n).filter((c) => c.isNamed);

/** The statements inside a $( … ), `…` or <( … ) node. */
function substitution(n: Node, cx: WordContext): void {
  const script = cx.sub(named(n));
  if (n.type === "process_substitution" && n.text.startsWith(">(")) script.readsOutput = true;
  cx.nested.push(script);
}

/** Substitutions anywhere below an expansion the parser cannot evaluate (${X:-$(…)}, $((…))). */
function nestedBelow(n: Node, cx: WordContext): void {
  for (const c of kids(n)) {
    if (c.type === "command_substitution" || c.type === "process_substitution") substitution(c, cx);
    else nestedBelow(c, cx);
  }
}

/** An unquoted word's backslashes: \x is x, backslash-newline is nothing. */
function unescapeBare(text: string): string {
  return text.replace(/\\(\n|.)/gs, (_, c: string) => (c === "\n" ? "" : c));
}

/** Inside "…": only \$ \` \" \\ and backslash-newline are escapes. */
function unescapeDouble(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, (_, c: string) => (c === "\n" ? "" : c));
}

const C_ESCAPES: Readonly<Record<string, string>> = {
  n: "\n",
  t: "\t",
  r: "\r",
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

/** The body of $'…' (ANSI-C quoting) decoded. */
export function ansiC(body: string): string {
  return body.replace(
    /\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)/gs,
    (_, e: string) => {
      const k = e[0] as string;
      if (k === "x") return String.fromCharCode(Number.parseInt(e.slice(1), 16));
      if (k === "u" || k === "U") {
        const cp = Number.parseInt(e.slice(1), 16);
        return cp <= 0x10ffff ? String.fromCodePoint(cp) : "\ufffd";
      }
      if (/[0-7]/.test(k)) return String.fromCharCode(Number.parseInt(e, 8) & 0xff);
      if (k === "c") return String.fromCharCode((e.charCodeAt(1) || 0) & 0x1f);
      return C_ESCAPES[k] ?? `\\${e}`;
    },
  );
}

function expansion(n: Node, w: Word, cx: WordContext): void {
  const parts = kids(n);
  // ${HOME}, and the forms that are $HOME whenever HOME is set: ${HOME:?…} ${HOME-…} ${HOME:=…}
  const op = parts[2]?.type ?? "}";
  if (parts[1]?.type === "variable_name" && parts[1].text === "HOME" && /^(\}|:?[-?=])$/.test(op)) {
    w.text += cx.home;
    nestedBelow(n, cx);
    return;
  }
  w.dynamic = true;
  nestedBelow(n, cx);
}

/** Appends one part of a word (quoted or not) to `w`. */
function part(n: Node, w: Word, cx: WordContext): void {
  switch (n.type) {
    case "word":
      w.text += unescapeBare(n.text);
      return;
    case "number":
    case "variable_name":
      w.text += n.text;
      return;
    case "string_content":
      w.text += unescapeDouble(n.text);
      return;
    case "raw_string":
      w.text += n.text.slice(1, -1);
      return;
    case "ansi_c_string":
      w.text += ansiC(n.text.slice(2, -1));
      return;
    case "string":
    case "translated_string":
    case "concatenation":
      for (const c of kids(n)) if (c.isNamed) part(c, w, cx);
      return;
    case "simple_expansion":
      if (n.text === "$HOME") w.text += cx.home;
      else w.dynamic = true;
      return;
    case "expansion":
      expansion(n, w, cx);
      return;
    case "command_substitution":
      substitution(n, cx);
      w.dynamic = true;
      return;
    case "process_substitution":
      substitution(n, cx);
      w.text += "/dev/fd/63";
      return;
    default:
      // Arithmetic, brace ranges, anything the model has no value for: unknown.
      w.dynamic = true;
      nestedBelow(n, cx);
  }
}

/** A leading ~ or ~/…: the home directory; ~user: unknown. */
function tilde(raw: string, home: string): Word {
  // `raw` keeps quoted characters backslash-escaped: a quoted character in the prefix (up to
  // the first slash) means no expansion, as in bash.
  const m = /^~([^/]*)(.*)$/s.exec(raw);
  if (m === null || (m[1] ?? "").includes("\\")) return { text: raw, dynamic: false };
  if (m[1] === "") return { text: home.replace(/[\\{},]/g, "\\$&") + (m[2] ?? ""), dynamic: false };
  return { text: raw, dynamic: true };
}

/** Every character backslash-escaped: quoted text that brace expansion and ~ must leave alone. */
const quote = (text: string) => text.replace(/[\s\S]/g, "\\$&");

/** Brace expansion of a literal word: a{b,c}d → abd acd (nested braces, no ranges). */
export function braces(raw: string, limit = 64): string[] {
  let depth = 0;
  let open = -1;
  const commas: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === "\\") i++;
    else if (c === "{") {
      if (depth++ === 0) open = i;
    } else if (c === "," && depth === 1) commas.push(i);
    else if (c === "}" && depth > 0 && --depth === 0) {
      if (commas.length === 0) return [raw];
      const pre = raw.slice(0, open);
      const post = raw.slice(i + 1);
      const cuts = [open, ...commas, i];
      const out: string[] = [];
      for (let k = 0; k + 1 < cuts.length && out.length < limit; k++) {
        const alt = raw.slice((cuts[k] as number) + 1, cuts[k + 1]);
        for (const x of braces(pre + alt + post, limit)) if (out.length < limit) out.push(x);
      }
      return out;
    }
  }
  return [raw];
}

/** The words one argument node becomes (more than one only through brace expansion). */
export function words(n: Node, cx: WordContext): Word[] {
  const parts = n.type === "concatenation" ? kids(n) : [n];
  // Bare text stays as written, quoted and expanded text is escaped: then brace expansion,
  // then ~ on each result, then quote removal — bash's order.
  let raw = "";
  let dynamic = false;
  for (const p of parts) {
    if (p.type === "word") raw += p.text;
    else {
      const w: Word = { text: "", dynamic: false };
      part(p, w, cx);
      raw += quote(w.text);
      dynamic ||= w.dynamic;
    }
  }
  const expanded = !dynamic && raw.includes("{") ? braces(raw) : [raw];
  return expanded.map((x) => {
    const t = x.startsWith("~") ? tilde(x, cx.home) : { text: x, dynamic: false };
    return { text: unescapeBare(t.text), dynamic: dynamic || t.dynamic };
  });
}

/** The single word a redirection target or a here-string is. */
export function oneWord(n: Node | undefined, cx: WordContext): Word {
  if (n === undefined) throw new ShellSyntaxError("a redirection without a target");
  const ws = words(n, cx);
  if (ws.length !== 1) return { text: ws.map((x) => x.text).join(" "), dynamic: true };
  return ws[0] as Word;
}

/** A heredoc body: literal when the delimiter is quoted, else its substitutions are nested. */
export function heredocBody(body: Node, quoted: boolean, cx: WordContext): Word {
  if (quoted) return { text: body.text, dynamic: false };
  const w: Word = { text: body.text, dynamic: false };
  for (const c of named(body)) {
    if (c.type === "heredoc_content" || /^\$(HOME|\{HOME\})$/.test(c.text)) continue;
    part(c, { text: "", dynamic: false }, cx);
    w.dynamic = true;
  }
  return w;
}

export { kids, named };
