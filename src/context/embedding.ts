// Semantic distance (OATS §7.4): the text a structured action stands for, the `Embedder`
// port that turns texts into vectors, and the built-in lexical embedder that needs no
// model. The action text is built from the tool and its typed parameters only: the
// model's rationale never reaches it (it never reaches the Gate's decision either).

/** Turns texts into vectors; equal inputs give equal vectors. Rejects with a coded error. */
export interface Embedder {
  /** A stable name journaled with each drift score (`lexical-v1`, `openai:<model>`, `onnx:<dir name>`). */
  readonly id: string;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

/** Hashed vocabulary size of the lexical embedder (fixed: vectors of two versions never mix). */
export const LEXICAL_DIMENSIONS = 4096;
/** At most this many characters of an action's text are embedded. */
export const ACTION_TEXT_MAX = 4096;

// Words too common to say anything about intent, and words every tool call carries. Their
// inverse document frequency is taken as zero: the fixed "IDF" of this embedder.
const STOP_WORDS = new Set(
  (
    "a an the and or but of to in on at by for from with without into onto as is are was were be been " +
    "it its this that these those i you we they he she me my our your their please can could would should " +
    "will shall may might do does did done have has had not no yes all any some each every then than so " +
    "if else about over under up down out just also only very more most such what which who whom how why " +
    "when where there here true false null none http https www com org net json txt"
  ).split(" "),
);

// FNV-1a over the UTF-16 code units: fast, deterministic, no allocation.
function fnv1a(s: string, seed: number): number {
  let h = 0x811c9dc5 ^ seed;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Lower-case word tokens (letters and digits), stop words dropped. */
export function words(text: string): string[] {
  const out: string[] = [];
  for (const w of text.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (w.length < 2 || w.length > 40 || STOP_WORDS.has(w)) continue;
    out.push(w);
  }
  return out;
}

function add(v: Map<number, number>, key: string, seed: number, weight: number): void {
  const i = fnv1a(key, seed) % LEXICAL_DIMENSIONS;
  v.set(i, (v.get(i) ?? 0) + weight);
}

/**
 * The lexical embedding of one text: sublinear (square-root) term frequency over hashed features —
 * words (weight 1), word bigrams (0.5) and the character trigrams of each word (0.25,
 * so "summarise" and "summary" share features) — stop words carrying no weight, the
 * vector L2-normalised. Dense `Float32Array` of LEXICAL_DIMENSIONS.
 */
export function lexicalVector(text: string): Float32Array {
  const counts = new Map<number, number>();
  const ws = words(text.slice(0, ACTION_TEXT_MAX * 4));
  for (let k = 0; k < ws.length; k++) {
    const w = ws[k] as string;
    add(counts, w, 1, 1);
    if (k > 0) add(counts, `${ws[k - 1]} ${w}`, 2, 0.5);
    const padded = `^${w}$`;
    for (let c = 0; c + 3 <= padded.length; c++) add(counts, padded.slice(c, c + 3), 3, 0.25);
  }
  const v = new Float32Array(LEXICAL_DIMENSIONS);
  let norm = 0;
  for (const [i, tf] of counts) {
    const w = Math.sqrt(tf); // sublinear: a repeated word counts, but less each time
    v[i] = w;
    norm += w * w;
  }
  if (norm > 0) {
    const n = Math.sqrt(norm);
    for (const [i] of counts) v[i] = (v[i] as number) / n;
  }
  return v;
}

/** The built-in embedder: no model, no network, deterministic. */
export const lexicalEmbedder: Embedder = {
  id: "lexical-v1",
  embed: (texts) => Promise.resolve(texts.map(lexicalVector)),
};

/** Cosine similarity; 0 when either vector is zero or the lengths differ. */
export function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  if (na === 0 || nb === 0) return 0;
  return dot / Math.sqrt(na * nb);
}

/** Semantic distance in [0, 1]: 1 − cosine, clamped (1 for unrelated or empty texts). */
export function distance(a: Float32Array, b: Float32Array): number {
  const d = 1 - cosine(a, b);
  return d < 0 ? 0 : d > 1 ? 1 : d;
}

/** What a structured action stands for, as text: tool, class, action and parameters. */
export interface ActionTextInput {
  toolClass: string;
  action: string;
  tool?: string | undefined;
  parameters: Readonly<Record<string, unknown>>;
}

/**
 * The text of a structured action: the tool's name, class and action, then every
 * parameter as `key value` (nested values flattened, arrays and objects walked, depth
 * bounded), cut at ACTION_TEXT_MAX characters. Never the rationale: it is not an input.
 */
export function actionText(a: ActionTextInput): string {
  const parts: string[] = [a.tool ?? "", a.toolClass, a.action];
  const walk = (v: unknown, depth: number): void => {
    if (depth > 6) return;
    if (typeof v === "string") parts.push(v.length > 1024 ? v.slice(0, 1024) : v);
    else if (typeof v === "number" || typeof v === "boolean") parts.push(String(v));
    else if (Array.isArray(v)) for (const x of v.slice(0, 64)) walk(x, depth + 1);
    else if (v !== null && typeof v === "object")
      for (const [k, x] of Object.entries(v).slice(0, 64)) {
        parts.push(k);
        walk(x, depth + 1);
      }
  };
  walk(a.parameters, 0);
  // Identifiers like read_file or api.github.com/repos become separate words.
  const text = parts.join(" ").replace(/[_./:\\@?&=#-]+/g, " ");
  return text.length > ACTION_TEXT_MAX ? text.slice(0, ACTION_TEXT_MAX) : text;
}
