// Taint labels as a set: Ari Kernel's ATTACH / PROPAGATE / MERGE / NEVER STRIP rules.
// A label's identity is its (source, origin) pair; merging keeps the first-seen label and
// raises its confidence to the highest seen, so a merge can add labels or make them more
// certain but can never remove one or lower it. Every function returns fresh arrays.
import type { TaintLabel, TaintSource } from "../contracts/index.js";

const keyOf = (l: TaintLabel) => `${l.source}\u0000${l.origin}`;

/** Union of label lists (Ari rule 3: MERGE). Order: first occurrence; never drops a label. */
export function mergeTaint(...lists: readonly (readonly TaintLabel[])[]): TaintLabel[] {
  const out: TaintLabel[] = [];
  const index = new Map<string, number>();
  for (const list of lists) {
    for (const label of list) {
      const k = keyOf(label);
      const at = index.get(k);
      if (at === undefined) {
        index.set(k, out.length);
        out.push({ ...label });
        continue;
      }
      const kept = out[at]!;
      // Absent confidence means "certain" (Ari's default of 1), so it dominates any number.
      if (
        kept.confidence !== undefined &&
        (label.confidence === undefined || label.confidence > kept.confidence)
      ) {
        if (label.confidence === undefined) delete kept.confidence;
        else kept.confidence = label.confidence;
      }
    }
  }
  return out;
}

/** Labels a run keeps by origin (`boundTaint`); the rest are kept as one label per source. */
export const MAX_LABELS_BY_ORIGIN = 64;
/** The origin of a label that stands for every label of its source past `MAX_LABELS_BY_ORIGIN`. */
export const MANY_ORIGINS = "(many origins)";

/**
 * `labels` with at most `max` labels by origin: the first `max` are kept as they are, every
 * later one is folded into one label per source (origin `MANY_ORIGINS`, the highest
 * confidence of those it stands for). No source is ever lost, so what policy matches
 * (sources) is unchanged; only the origins past the bound are. A run whose results each name
 * a fresh origin (a host, a tool name) cannot grow its labels, or the cost of merging them,
 * without bound.
 */
export function boundTaint(labels: TaintLabel[], max = MAX_LABELS_BY_ORIGIN): TaintLabel[] {
  if (labels.length <= max) return labels;
  const folded = labels.slice(max).map((l) => {
    const { addedAt: _a, propagatedFrom: _p, ...rest } = l;
    return { ...rest, origin: MANY_ORIGINS };
  });
  return mergeTaint(labels.slice(0, max), folded);
}

/** Distinct sources present, in TAINT_SOURCES-independent first-seen order. */
export function taintSources(labels: readonly TaintLabel[]): TaintSource[] {
  return [...new Set(labels.map((l) => l.source))];
}

export function hasTaint(labels: readonly TaintLabel[], source: TaintSource): boolean {
  return labels.some((l) => l.source === source);
}

/** True when every label of `before` (by source and origin) is still in `after`. */
export function taintIncludes(after: readonly TaintLabel[], before: readonly TaintLabel[]): boolean {
  const have = new Set(after.map(keyOf));
  return before.every((l) => have.has(keyOf(l)));
}
