// A POSIX/bash command-line parser for the engine's shell checks (docs/hooks.md "Shell
// parsing"): quotes ('…', "…", $'…', $"…"), backslash escapes, comments, the operators ; &
// && || | |& and newlines, subshells ( … ), command substitution $( … ) and `…`, arithmetic
// $(( … )), process substitution <( … ) >( … ), parameter expansion, heredocs and
// redirections with their file descriptors. Per script it yields the simple commands in
// order — words after quote removal, each `dynamic` when its value depends on an expansion
// the parser cannot know — with their redirections and nested scripts. It never throws:
// what it cannot read (an unterminated quote, nesting deeper than MAX_DEPTH, a script over
// MAX_LENGTH) is `{ ok: false }`, which the engine denies.
//
// No library: `shell-quote`, the usual choice, parses neither $( … ), backticks, heredocs
// nor process substitution — exactly where writes hide.
import {
  ansiC,
  closingBrace,
  closingParen,
  META,
  REDIRECT,
  ShellSyntaxError,
  skipBacktick,
  skipSingle,
} from "./shell-scan.js";

export const MAX_DEPTH = 16;
export const MAX_LENGTH = 256 * 1024;

export interface Word {
  /** The value after quote removal ($HOME, ${HOME} and a leading ~ expanded). */
  text: string;
  /** True when part of the value comes from an expansion the parser cannot know. */
  dynamic: boolean;
}

export interface Redirect {
  /** >, >>, >|, &>, &>>, <>, >&, <, <<, <<-, <<<, <& */
  op: string;
  fd: number | undefined;
  target: Word;
}

export interface SimpleCommand {
  words: Word[];
  redirects: Redirect[];
  /** Scripts nested in this command: $( … ), `…`, <( … ), >( … ), substitutions in heredocs. */
  nested: Script[];
}

export type Item = { kind: "command"; command: SimpleCommand } | { kind: "open" } | { kind: "close" };

export interface Script {
  items: Item[];
}

export type ParseResult = { ok: true; script: Script } | { ok: false; reason: string };

export interface ShellParseOptions {
  /** The expansion of a leading ~ and of $HOME / ${HOME}. */
  home: string;
}

interface Heredoc {
  delimiter: string;
  strip: boolean;
  expand: boolean;
  command: SimpleCommand;
}

const emptyCommand = (): SimpleCommand => ({ words: [], redirects: [], nested: [] });
const isEmpty = (c: SimpleCommand) => c.words.length + c.redirects.length + c.nested.length === 0;

class Parser {
  i = 0;
  readonly #pending: Heredoc[] = [];

  constructor(
    readonly src: string,
    readonly depth: number,
    readonly opts: ShellParseOptions,
  ) {
    if (depth > MAX_DEPTH) throw new ShellSyntaxError(`nesting deeper than ${MAX_DEPTH}`);
  }

  sub(text: string): Script {
    return new Parser(text, this.depth + 1, this.opts).script();
  }

  script(): Script {
    const items: Item[] = [];
    let cur = emptyCommand();
    const flush = () => {
      if (!isEmpty(cur)) items.push({ kind: "command", command: cur });
      cur = emptyCommand();
    };
    const src = this.src;
    while (this.i < src.length) {
      const c = src[this.i] as string;
      const next = src[this.i + 1];
      if (c === " " || c === "\t" || c === "\r") this.i++;
      else if (c === "\\" && next === "\n") this.i += 2;
      else if (c === "\n") {
        flush();
        this.i++;
        this.#heredocBodies();
      } else if (c === "#") this.#skipComment();
      else if ((c === "<" || c === ">") && next === "(") this.#processSubstitution(cur);
      else if (/[\d<>&]/.test(c) && REDIRECT.test(src.slice(this.i, this.i + 6))) this.#redirect(cur);
      else if (c === ";" || c === "&" || c === "|") {
        flush();
        this.i++;
      } else if (c === "(" || c === ")") {
        flush();
        items.push({ kind: c === "(" ? "open" : "close" });
        this.i++;
      } else cur.words.push(this.word(cur));
    }
    flush();
    if (this.#pending.length > 0) this.#heredocBodies();
    return { items };
  }

  #skipComment(): void {
    const nl = this.src.indexOf("\n", this.i);
    this.i = nl < 0 ? this.src.length : nl;
  }

  #processSubstitution(cur: SimpleCommand): void {
    const end = closingParen(this.src, this.i + 2);
    cur.nested.push(this.sub(this.src.slice(this.i + 2, end - 1)));
    cur.words.push({ text: "/dev/fd/63", dynamic: false });
    this.i = end;
  }

  #redirect(cur: SimpleCommand): void {
    const m = REDIRECT.exec(this.src.slice(this.i, this.i + 6)) as RegExpExecArray;
    const op = m[2] as string;
    const fd = m[1] !== undefined ? Number(m[1]) : undefined;
    this.i += m[0].length;
    while (this.src[this.i] === " " || this.src[this.i] === "\t") this.i++;
    const at = this.src[this.i];
    if ((at === "<" || at === ">") && this.src[this.i + 1] === "(") {
      // A process substitution as the target: its script is nested, the file a pipe.
      this.#processSubstitution(cur);
      const target = cur.words.pop() as Word;
      cur.redirects.push({ op, fd, target });
      return;
    }
    if (at === undefined || META.has(at)) throw new ShellSyntaxError(`no target after ${op}`);
    const start = this.i;
    const target = this.word(cur);
    cur.redirects.push({ op, fd, target });
    if (op === "<<" || op === "<<-") {
      const raw = this.src.slice(start, this.i);
      const expand = !/['"\\]/.test(raw);
      this.#pending.push({ delimiter: target.text, strip: op === "<<-", expand, command: cur });
    }
  }

  /** Heredoc bodies after a newline: data, except the substitutions of an unquoted one. */
  #heredocBodies(): void {
    const src = this.src;
    for (const h of this.#pending.splice(0)) {
      const startBody = this.i;
      let endBody = src.length;
      while (this.i < src.length) {
        const nl = src.indexOf("\n", this.i);
        const lineEnd = nl < 0 ? src.length : nl;
        const line = src.slice(this.i, lineEnd);
        const next = nl < 0 ? src.length : nl + 1;
        if ((h.strip ? line.replace(/^\t+/, "") : line) === h.delimiter) {
          endBody = this.i;
          this.i = next;
          break;
        }
        this.i = next;
      }
      if (h.expand) this.#substitutions(src.slice(startBody, Math.min(endBody, this.i)), h.command);
    }
  }

  /** The $( … ) and `…` inside text that is otherwise data (heredoc bodies, ${ … } bodies). */
  #substitutions(text: string, into: SimpleCommand): void {
    let i = 0;
    while (i < text.length) {
      const c = text[i];
      if (c === "\\") i += 2;
      else if (c === "$" && text[i + 1] === "(") {
        const end = closingParen(text, i + 2);
        into.nested.push(this.sub(text.slice(i + 2, end - 1)));
        i = end;
      } else if (c === "`") {
        const end = skipBacktick(text, i + 1);
        into.nested.push(this.sub(unescapeBackticks(text.slice(i + 1, end - 1))));
        i = end;
      } else i++;
    }
  }

  word(cmd: SimpleCommand): Word {
    const w: Word = { text: "", dynamic: false };
    const src = this.src;
    if (src[this.i] === "~") this.#tilde(w);
    while (this.i < src.length) {
      const c = src[this.i] as string;
      if (META.has(c)) break;
      if (c === "\\") {
        if (src[this.i + 1] !== "\n") w.text += src[this.i + 1] ?? "";
        this.i += 2;
      } else if (c === "'") {
        const end = skipSingle(src, this.i + 1);
        w.text += src.slice(this.i + 1, end - 1);
        this.i = end;
      } else if (c === '"') {
        this.i++;
        this.#double(w, cmd);
      } else if (c === "$") this.#dollar(w, cmd, false);
      else if (c === "`") this.#backtick(w, cmd);
      else {
        w.text += c;
        this.i++;
      }
    }
    return w;
  }

  #tilde(w: Word): void {
    const m = /^~([A-Za-z0-9_.+-]*)/.exec(this.src.slice(this.i, this.i + 64)) as RegExpExecArray;
    const after = this.src[this.i + m[0].length];
    if (after !== undefined && after !== "/" && !META.has(after)) return;
    this.i += m[0].length;
    if (m[1] === "") w.text += this.opts.home;
    else {
      w.text += m[0];
      w.dynamic = true;
    }
  }

  #double(w: Word, cmd: SimpleCommand): void {
    const src = this.src;
    while (this.i < src.length) {
      const c = src[this.i] as string;
      if (c === '"') {
        this.i++;
        return;
      }
      if (c === "\\") {
        const n = src[this.i + 1] ?? "";
        if (n === "\n") {
          // line continuation
        } else if ('$`"\\'.includes(n)) w.text += n;
        else w.text += `\\${n}`;
        this.i += 2;
      } else if (c === "$") this.#dollar(w, cmd, true);
      else if (c === "`") this.#backtick(w, cmd);
      else {
        w.text += c;
        this.i++;
      }
    }
    throw new ShellSyntaxError("unterminated double quote");
  }

  #backtick(w: Word, cmd: SimpleCommand): void {
    const end = skipBacktick(this.src, this.i + 1);
    cmd.nested.push(this.sub(unescapeBackticks(this.src.slice(this.i + 1, end - 1))));
    w.dynamic = true;
    this.i = end;
  }

  #dollar(w: Word, cmd: SimpleCommand, quoted: boolean): void {
    const src = this.src;
    const n = src[this.i + 1] ?? "";
    if (n === "(") {
      const end = closingParen(src, this.i + 2);
      cmd.nested.push(this.sub(src.slice(this.i + 2, end - 1)));
      w.dynamic = true;
      this.i = end;
    } else if (n === "{") {
      const end = closingBrace(src, this.i + 2);
      const body = src.slice(this.i + 2, end - 1);
      if (body === "HOME") w.text += this.opts.home;
      else {
        w.dynamic = true;
        this.#substitutions(body, cmd);
      }
      this.i = end;
    } else if (n === "'" && !quoted) {
      const r = ansiC(src, this.i + 2);
      w.text += r.text;
      this.i = r.end;
    } else if (n === '"' && !quoted) {
      this.i += 2;
      this.#double(w, cmd);
    } else if (/[A-Za-z_]/.test(n)) {
      const name = (
        /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(this.i + 1, this.i + 257)) as RegExpExecArray
      )[0];
      if (name === "HOME") w.text += this.opts.home;
      else w.dynamic = true;
      this.i += 1 + name.length;
    } else if (/[0-9@*#?$!-]/.test(n)) {
      w.dynamic = true;
      this.i += 2;
    } else {
      w.text += "$";
      this.i++;
    }
  }
}

/** Inside backquotes, \` \\ and \$ stand for themselves. */
function unescapeBackticks(text: string): string {
  return text.replace(/\\([`\\$])/g, "$1");
}

/** Parses a command line; never throws. */
export function parseShell(src: string, opts: ShellParseOptions): ParseResult {
  if (src.length > MAX_LENGTH) return { ok: false, reason: `the command is over ${MAX_LENGTH} characters` };
  try {
    return { ok: true, script: new Parser(src, 0, opts).script() };
  } catch (err) {
    if (err instanceof ShellSyntaxError) return { ok: false, reason: err.message };
    // A stack overflow on pathological nesting inside quotes, or any other fault: refused.
    return { ok: false, reason: "the command could not be parsed" };
  }
}
