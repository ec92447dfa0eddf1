// The records value-level provenance (provenance.ts) keeps of a run's tool outputs: one per
// output up to the run's `maxOutputs`, then one merged record for all later outputs and for
// any output kept whole nowhere (`addOverflow`), which keeps only their labels (bounded by
// `boundTaint`) and fails closed.
import type { TaintLabel } from "../contracts/index.js";
import { proseDays } from "./provenance-dates.js";
import { proseNumbers } from "./provenance-source.js";
import { compact, type Leaf, normalize } from "./provenance-text.js";
import type { Output, OutputOrigin } from "./provenance-types.js";
import { readDesignated } from "./provenance-vouch.js";
import { boundTaint, mergeTaint } from "./taint.js";

/** The longest field value an argument can equal to count as a returned record. */
const MAX_FIELD = 256;

export interface OutputInput {
  seq: number;
  data: unknown;
  leaves: readonly Leaf[];
  truncated: boolean;
  labels: readonly TaintLabel[];
  origin: OutputOrigin;
  minToken: number;
}

/**
 * The record of one output. `spend` takes characters from the run's text budget (false:
 * the budget is spent and nothing was taken): the text is then not kept, and neither are
 * the fields — stricter, never laxer (a value then counts as copied, not as a record).
 */
export function outputRecord(o: OutputInput, spend: (chars: number) => boolean): Output {
  // An output that carried instructions addressed to the agent (taint `instructions`,
  // the Gate's output screening) vouches only for values outside its flagged spans
  // (`vouchedValues`): nothing inside the injected block vouches.
  const flagged = o.labels.some((l) => l.source === "instructions");
  const read =
    o.origin.designated === true && !o.truncated
      ? readDesignated(
          o.leaves.map((l) => l.text),
          o.minToken,
          flagged,
        )
      : { endorsed: new Set<string>() };
  const compacted = o.leaves.map((l) => compact(normalize(l.text)));
  const text = compacted.join("\u0000");
  const keep = spend(text.length);
  const structured = typeof o.data === "object" && o.data !== null;
  const fields = new Set<string>();
  if (structured) for (const c of compacted) if (c.length > 0 && c.length <= MAX_FIELD) fields.add(c);
  if (fields.size > 0 && !spend([...fields].reduce((n, f) => n + f.length + 8, 0))) fields.clear();
  return {
    seq: o.seq,
    labels: mergeTaint(o.labels),
    endorsed: read.endorsed,
    text: keep ? text : undefined,
    fields,
    structured,
    designated: o.origin.designated === true,
    days: proseDays(o.leaves.map((l) => l.text)),
    numbers: proseNumbers(o.leaves.map((l) => l.text)),
    ...(read.injected === undefined ? {} : { ownNumbers: numbersOutside(o.leaves, read.injected) }),
    ...(o.truncated ? { partial: true as const } : {}),
    ...(read.injected === undefined
      ? {}
      : { injected: read.injected.map((t) => compact(normalize(t))).join("\u0000") }),
  };
}

/** The prose numbers of the leaves with every injected block cut out. */
function numbersOutside(leaves: readonly Leaf[], blocks: readonly string[]): Set<string> {
  return proseNumbers(leaves.map((l) => blocks.reduce((t, b) => t.split(b).join("\n"), l.text)));
}

/**
 * The merged record, opened by the first output folded into it (`seq`): no text, fields,
 * vouched tokens or days — it counts as holding every value and every date (fail closed).
 */
export function mergedRecord(seq: number, labels: readonly TaintLabel[]): Output {
  return {
    seq,
    labels: mergedLabels([], labels),
    endorsed: new Set(),
    text: undefined,
    fields: new Set(),
    structured: true,
    designated: false,
    days: new Set(),
    numbers: new Set(),
    merged: true,
  };
}

/** The merged record's labels joined by `labels`, bounded: every source is kept, origins up to the cap. */
export function mergedLabels(kept: readonly TaintLabel[], labels: readonly TaintLabel[]): TaintLabel[] {
  return boundTaint(mergeTaint(kept, labels));
}
