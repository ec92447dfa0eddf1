// A generated corpus of tricky command lines for bench/shell-parser.ts (seeded, so every run
// measures the same lines): words built from quoting pieces (single, double, ANSI-C, escapes,
// ~, $HOME, braces), redirection targets spelled the same ways, and whole lines joined with
// operators, groups, substitutions and heredocs — some cut short or unbalanced on purpose.

/** mulberry32: a small seeded PRNG. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;

const PIECES = [
  "abc",
  "x.y",
  "'s q'",
  '"d q"',
  '"$HOME/d"',
  "a\\ b",
  "\\'",
  '\\"',
  "a\\\\b",
  "$'\\x41\\tz'",
  "$'a\\'b'",
  "'a\"b'",
  '"a\'b"',
  '"\\$x"',
  '"a\\`b"',
  "$HOME",
  `${"$"}{HOME}`,
  "{p,q}",
  "n{1,2}m",
  "*.zz",
  "--opt=v",
  '""',
  "''",
  "é",
  "a#b",
  "%",
  "@",
  "+",
];

/** One word (first pieces may be ~ or ~/…, as the shell only expands a leading tilde). */
export function word(r: () => number): string {
  const n = 1 + Math.floor(r() * 3);
  let w = r() < 0.1 ? pick(r, ["~", "~/", "~/t"]) : "";
  for (let i = 0; i < n; i++) w += pick(r, PIECES);
  return w;
}

/** Redirection targets: file names only (no slash), spelled with quotes and escapes. */
export function target(r: () => number): string {
  return pick(r, ["out", "'o u'", '"q"x', "o\\ p", "$'\\x61b'", "f{1,2}", "'a'\"b\"c", "z\\'"]);
}

const OPS = [" ; ", " && ", " || ", " | ", " & ", "\n"];
const WRAPS: ((s: string) => string)[] = [
  (s) => s,
  (s) => `( ${s} )`,
  (s) => `{ ${s}; }`,
  (s) => `echo "$(${s})"`,
  (s) => `echo \`${s}\``,
  (s) => `if ${s}; then true; fi`,
  (s) => `for i in a b; do ${s}; done`,
  (s) => `${s} > o 2>&1`,
  (s) => `cat <<EOF\n$(${s})\nEOF`,
  (s) => `diff <(${s}) <(ls)`,
  (s) => `case x in x) ${s};; esac`,
  (s) => `f() { ${s}; }`,
];

/** A whole line; about one in three is broken (cut short or given a stray quote or paren). */
export function line(r: () => number): string {
  const parts: string[] = [];
  const n = 1 + Math.floor(r() * 3);
  for (let i = 0; i < n; i++) {
    const cmd = `${pick(r, ["echo", "ls", "cat", "grep"])} ${word(r)} ${word(r)}`;
    parts.push(pick(r, WRAPS)(cmd));
  }
  let s = parts.reduce((a, b) => `${a}${pick(r, OPS)}${b}`);
  if (r() < 0.33) {
    const k = r();
    if (k < 0.4) s = s.slice(0, Math.floor(r() * s.length));
    else if (k < 0.7) s += pick(r, ["'", '"', "(", ")", "`", "$(", "{", "|", "&&", ">"]);
    else s = pick(r, ["'", '"', "(", "$("]) + s;
  }
  return s;
}
