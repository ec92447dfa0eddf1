// The retrieval ranking: a bounded BM25 over the memories a reader may see, and, when an
// Embedder is configured, cosine similarity blended in. Pure functions over plain data;
// the store hands in at most `maxSearchScan` candidates, so a search's cost is bounded
// whatever the store holds.

export interface Scored {
  index: number;
  score: number;
}

const MAX_TOKENS_PER_TEXT = 4096;
const TOKEN = /[\p{L}\p{N}]+/gu;

/** Lower-cased letter/digit runs (at most 4096 per text, each at most 64 characters). */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const m of text.toLowerCase().matchAll(TOKEN)) {
    out.push(m[0].slice(0, 64));
    if (out.length >= MAX_TOKENS_PER_TEXT) break;
  }
  return out;
}

const K1 = 1.2;
const B = 0.75;

/** BM25 (k1 = 1.2, b = 0.75) of each document for the query; only documents with a match are returned. */
export function bm25(query: string, docs: readonly string[]): Scored[] {
  const terms = [...new Set(tokenize(query))];
  if (terms.length === 0 || docs.length === 0) return [];
  const tokenized = docs.map(tokenize);
  const avg = tokenized.reduce((n, t) => n + t.length, 0) / tokenized.length || 1;
  const df = new Map<string, number>();
  const tfs = tokenized.map((toks) => {
    const tf = new Map<string, number>();
    for (const t of toks) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const term of terms) if (tf.has(term)) df.set(term, (df.get(term) ?? 0) + 1);
    return tf;
  });
  const n = docs.length;
  const out: Scored[] = [];
  tfs.forEach((tf, index) => {
    const len = tokenized[index]?.length ?? 0;
    let score = 0;
    for (const term of terms) {
      const f = tf.get(term);
      if (f === undefined) continue;
      const d = df.get(term) ?? 0;
      const idf = Math.log(1 + (n - d + 0.5) / (d + 0.5));
      score += (idf * f * (K1 + 1)) / (f + K1 * (1 - B + (B * len) / avg));
    }
    if (score > 0) out.push({ index, score });
  });
  return out;
}

export function cosine(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length || a.length === 0) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** Cosine similarity below this adds nothing (otherwise every memory would match a little). */
export const MIN_SIMILARITY = 0.3;

/**
 * The final ranking: BM25 scores normalised to [0, 1], blended half and half with cosine
 * similarity when vectors are given (a document with no keyword match can still rank by
 * meaning). Ties keep the candidates' order (newest first). At most `limit` results.
 */
export function rank(
  keyword: readonly Scored[],
  semantic: readonly (number | undefined)[] | undefined,
  count: number,
  limit: number,
): Scored[] {
  const max = keyword.reduce((m, s) => Math.max(m, s.score), 0) || 1;
  const kw = new Map(keyword.map((s) => [s.index, s.score / max]));
  const out: Scored[] = [];
  for (let index = 0; index < count; index++) {
    const k = kw.get(index) ?? 0;
    const sim = semantic?.[index];
    const s = sim !== undefined && sim >= MIN_SIMILARITY ? sim : 0;
    const score = semantic === undefined ? k : 0.5 * k + 0.5 * s;
    if (score > 0) out.push({ index, score });
  }
  out.sort((a, b) => b.score - a.score || a.index - b.index);
  return out.slice(0, limit);
}
