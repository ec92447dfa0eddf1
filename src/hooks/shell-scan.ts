// Low-level scanners of the shell parser (shell.ts): the end of a quoted string, of a
// $( … ), ${ … } or `…`, and ANSI-C $'…' decoding. Each throws ShellSyntaxError on
// unterminated input; shell.ts turns that into a refusal, never a crash.

export class ShellSyntaxError extends Error {}

export const META = new Set([" ", "\t", "\n", ";", "&", "|", "(", ")", "<", ">"]);
export const REDIRECT = /^(\d{1,2})?(&>>|&>|>>|>\||>&|<<<|<<-|<<|<>|<&|>|<)/;

/** Index just after the ")" that closes the "(" before `start`, quotes and nesting respected. */
export function closingParen(src: string, start: number): number {
  let depth = 1;
  let i = start;
  while (i < src.length) {
    const c = src[i] as string;
    if (c === "\\") i += 2;
    else if (c === "'") i = skipSingle(src, i + 1);
    else if (c === '"') i = skipDouble(src, i + 1);
    else if (c === "`") i = skipBacktick(src, i + 1);
    else if (c === "#" && (i === start || /[\s;&|(]/.test(src[i - 1] ?? ""))) {
      const nl = src.indexOf("\n", i);
      i = nl < 0 ? src.length : nl;
    } else {
      if (c === "(") depth++;
      else if (c === ")" && --depth === 0) return i + 1;
      i++;
    }
  }
  throw new ShellSyntaxError("unterminated ( … )");
}

export function skipSingle(src: string, i: number): number {
  const end = src.indexOf("'", i);
  if (end < 0) throw new ShellSyntaxError("unterminated single quote");
  return end + 1;
}

export function skipDouble(src: string, i: number): number {
  while (i < src.length) {
    const c = src[i];
    if (c === "\\") i += 2;
    else if (c === '"') return i + 1;
    else if (c === "$" && src[i + 1] === "(") i = closingParen(src, i + 2);
    else if (c === "`") i = skipBacktick(src, i + 1);
    else i++;
  }
  throw new ShellSyntaxError("unterminated double quote");
}

export function skipBacktick(src: string, i: number): number {
  while (i < src.length) {
    const c = src[i];
    if (c === "\\") i += 2;
    else if (c === "`") return i + 1;
    else i++;
  }
  throw new ShellSyntaxError("unterminated backquote");
}

/** Index after the "}" closing a "${" whose body starts at i. */
export function closingBrace(src: string, i: number): number {
  let depth = 1;
  while (i < src.length) {
    const c = src[i] as string;
    if (c === "\\") i += 2;
    else if (c === "'") i = skipSingle(src, i + 1);
    else if (c === '"') i = skipDouble(src, i + 1);
    else if (c === "`") i = skipBacktick(src, i + 1);
    else if (c === "$" && src[i + 1] === "(") i = closingParen(src, i + 2);
    else {
      if (c === "{") depth++;
      else if (c === "}" && --depth === 0) return i + 1;
      i++;
    }
  }
  throw new ShellSyntaxError("unterminated parameter expansion");
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

/** $'…' (ANSI-C quoting): the decoded text and the index after the closing quote. */
export function ansiC(src: string, i: number): { text: string; end: number } {
  let text = "";
  while (i < src.length) {
    const c = src[i] as string;
    if (c === "'") return { text, end: i + 1 };
    if (c !== "\\") {
      text += c;
      i++;
      continue;
    }
    const n = src[i + 1] ?? "";
    const hex = /^x([0-9a-fA-F]{1,2})/.exec(src.slice(i + 1, i + 4));
    const uni = /^[uU]([0-9a-fA-F]{1,8})/.exec(src.slice(i + 1, i + 10));
    const oct = /^([0-7]{1,3})/.exec(src.slice(i + 1, i + 4));
    if (hex) {
      text += String.fromCharCode(Number.parseInt(hex[1] as string, 16));
      i += 1 + hex[0].length;
    } else if (uni) {
      const cp = Number.parseInt(uni[1] as string, 16);
      text += cp <= 0x10ffff ? String.fromCodePoint(cp) : "\ufffd";
      i += 1 + uni[0].length;
    } else if (oct) {
      text += String.fromCharCode(Number.parseInt(oct[1] as string, 8) & 0xff);
      i += 1 + oct[0].length;
    } else if (n === "c") {
      text += String.fromCharCode((src.charCodeAt(i + 2) || 0) & 0x1f);
      i += 3;
    } else {
      text += C_ESCAPES[n] ?? `\\${n}`;
      i += 2;
    }
  }
  throw new ShellSyntaxError("unterminated $'…'");
}
