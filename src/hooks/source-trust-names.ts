// Look-alike source names: a plugin, skill or MCP server named "gіthub" (Cyrillic і) or
// "ｇithub" (full width) must not pass for the trusted "github". `skeleton` folds a name
// the way a reader sees it (NFKC, lower case, invisible and bidi controls removed, common
// Cyrillic/Greek homoglyphs and 0/1 mapped to Latin letters, after UTS #39's idea of a
// confusable skeleton, with a small table); two different names with one skeleton are
// look-alikes. A name carrying invisible or bidirectional control characters is refused on
// its own.

const HOMOGLYPHS: Readonly<Record<string, string>> = {
  // Cyrillic
  а: "a",
  в: "b",
  ь: "b",
  е: "e",
  ё: "e",
  к: "k",
  м: "m",
  н: "h",
  о: "o",
  р: "p",
  с: "c",
  т: "t",
  у: "y",
  х: "x",
  ѕ: "s",
  і: "i",
  ї: "i",
  ј: "j",
  ԁ: "d",
  ԛ: "q",
  ԝ: "w",
  ɡ: "g",
  һ: "h",
  // Greek
  α: "a",
  β: "b",
  ε: "e",
  η: "n",
  ι: "i",
  κ: "k",
  μ: "u",
  ν: "v",
  ο: "o",
  ρ: "p",
  τ: "t",
  υ: "u",
  χ: "x",
  ϲ: "c",
  // Digits and Latin look-alikes
  "0": "o",
  "1": "l",
  ı: "i",
  ƅ: "b",
  ɑ: "a",
  ɩ: "i",
  ǀ: "l",
  ȷ: "j",
  ɢ: "g",
  ł: "l",
  "|": "l",
};

/** Zero-width, joiner, bidi embedding/override/isolate and other invisible format characters. */
const INVISIBLE =
  /\u034f|[\ufe00-\ufe0f]|[\u00ad\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufeff\uffa0]/u;

export function hasInvisible(name: string): boolean {
  return INVISIBLE.test(name);
}

/** The name as a reader sees it. */
export function skeleton(name: string): string {
  const folded = name.normalize("NFKC").toLowerCase().replace(new RegExp(INVISIBLE.source, "gu"), "");
  let out = "";
  for (const ch of folded.normalize("NFD").replace(/\p{M}+/gu, "")) out += HOMOGLYPHS[ch] ?? ch;
  return out.replace(/rn/g, "m").replace(/vv/g, "w");
}

/** The trusted name `name` imitates without being it, if any. */
export function lookAlikeOf(name: string, trusted: Iterable<string>): string | undefined {
  const s = skeleton(name);
  for (const t of trusted) {
    if (t !== name && skeleton(t) === s) return t;
  }
  return undefined;
}
