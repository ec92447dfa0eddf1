// Value-level provenance: an argument whose value (or a substantial part of it) occurs in a
// tainted tool output, and not in the user's original request, inherits that output's
// taint, even when the model copied it by hand. Two matchers, both over normalized text
// (NFKC, invisible format characters removed, lower case):
//   - distinctive tokens, matched whole: URLs (also without query, and their host), email
//     addresses (and their domain), host names, IBANs (spaces removed), digit runs of 8+
//     digits (separators removed), and any token of `minToken`+ characters containing a
//     digit or one of `@ / : . _`. Plain words never qualify, so prose does not trigger.
//   - shared substrings: outputs are fingerprinted by winnowing (Schleimer et al., 2003)
//     over their letters and digits, with k-grams of k = `minSubstring` and windows of
//     w = `winnowWindow` k-grams. A shared run shorter than k never matches; a shared run of
//     k + w - 1 or more always does; only about 2/(w+1) of the k-grams are stored.
//     Arguments are checked with all their k-grams.
// Memory and time are bounded: per-output and per-run caps; when a cap is hit the index
// fails closed (unindexed outputs still lend their taint to any substantial argument).
// Past `maxOutputs` outputs a run's later outputs are folded into one merged record that
// keeps only their labels (bounded) and lends them to any substantial argument: earlier
// outputs are never evicted, so a flood of results cannot push an indexed value out. An
// output kept whole nowhere (`addOverflow`: the hooks' stored outputs past their caps) is
// folded into the same record.
// Collisions of the 52-bit fingerprints can only add taint, never remove it.
import type { TaintLabel } from "../contracts/index.js";
import { type DayKey, dayOfValue, daysIn } from "./provenance-dates.js";
import { mergedLabels, mergedRecord, outputRecord } from "./provenance-record.js";
import {
  dictatedNumber,
  inRequest,
  proseNumbers,
  sourced,
  type TrustedText,
  wordsOf,
} from "./provenance-source.js";
import {
  clip,
  collectLeaves,
  compact,
  compactRuns,
  extractTokens,
  forEachGram,
  type Leaf,
  normalize,
  type Token,
  TRIM,
  winnow,
} from "./provenance-text.js";
import {
  DEFAULT_MAX_OUTPUTS,
  type Output,
  type OutputOrigin,
  type ProvenanceHit,
  type ProvenanceKind,
  type ProvenanceOptions,
} from "./provenance-types.js";
import { type TokenKind, wantedKinds, withoutEndorsed } from "./provenance-vouch.js";
import { mergeTaint } from "./taint.js";

export { extractTokens } from "./provenance-text.js";
export type { OutputOrigin, ProvenanceHit, ProvenanceKind, ProvenanceOptions } from "./provenance-types.js";

/** Letters and digits of a run's outputs kept for whole-value matching. */
const MAX_TEXT_CHARS = 8_000_000;
/** The shortest value (letters and digits) matched whole. */
const MIN_WHOLE = 3;

export class ProvenanceIndex {
  readonly #opts: ProvenanceOptions;
  readonly #k: number;
  readonly #w: number;
  readonly #outputs: Output[] = [];
  readonly #tokens = new Map<string, number[]>();
  readonly #grams = new Map<number, number>();
  readonly #gramsMore = new Map<number, number[]>();
  /** Output ids stored beyond the first per fingerprint (they cost memory too). */
  #postings = 0;
  /** Outputs (ids) not fully indexed because a cap was hit. */
  readonly #overflowed: number[] = [];
  #trustedText = "";
  /** The request as `inRequest` matches it (its compacted text, its words). */
  #trusted: TrustedText = { compact: "", words: " " };
  #trustedNumbers = new Set<string>();
  #trustedGrams = new Set<number>();
  #textChars = 0;
  /** Outputs indexed one by one; later ones are folded into the merged record. */
  readonly #maxOutputs: number;
  /** The id of the merged record, once an output was folded (the cap, or `addOverflow`). */
  #merged: number | undefined;
  /** Some output was folded because the run reached `#maxOutputs`. */
  #capped = false;
  /** The kinds of value the user's request asks the agent to find (`wantedKinds`). */
  #wanted = new Set<TokenKind>();
  /** The days the user's request names (provenance-dates.ts). */
  #trustedDays = new Set<DayKey>();

  constructor(opts: ProvenanceOptions) {
    this.#opts = opts;
    this.#k = opts.minSubstring;
    this.#w = opts.winnowWindow;
    this.#maxOutputs = opts.maxOutputs ?? DEFAULT_MAX_OUTPUTS;
  }

  /** Fingerprints held (tokens + winnowed k-grams + extra output ids per fingerprint). */
  get size(): number {
    return this.#tokens.size + this.#grams.size + this.#postings;
  }

  /**
   * Output records held (none: no value can have come from one): at most `maxOutputs`,
   * plus the merged record.
   */
  get outputs(): number {
    return this.#outputs.length;
  }

  /** True when some output was not fully indexed and lends its taint to any substantial value. */
  get overflowed(): boolean {
    return this.#overflowed.length > 0;
  }

  /** Characters of output text and fields held (at most `MAX_TEXT_CHARS`). */
  get textChars(): number {
    return this.#textChars;
  }

  /**
   * The sequence number of the first output folded into the merged record (the first past the
   * cap, or the first `addOverflow`): the run's provenance holds a fail-closed merged record
   * from there on. Undefined while no output was folded.
   */
  get mergedFrom(): number | undefined {
    return this.#merged === undefined ? undefined : this.#outputs[this.#merged]?.seq;
  }

  /**
   * Whether every string leaf of `value` (letters and digits, at least one) occurs in the
   * user's original request: the value was named by the user, not picked from an output.
   */
  fromRequest(value: unknown): boolean {
    const { leaves, truncated } = collectLeaves(value, this.#opts.maxScanChars, false);
    if (truncated || leaves.length === 0) return false;
    return leaves.every((leaf) => inRequest(leaf.text, this.#trusted, this.#opts.minToken));
  }

  /**
   * Whether a number (an amount) was dictated by an output's prose: some output writes it out
   * in text (not as a record's field) and neither the request nor a designated output
   * (outside its injected blocks) holds it (provenance-source.ts `dictatedNumber`).
   */
  dictatedNumber(value: number): boolean {
    return dictatedNumber(value, this.#outputs, this.#trustedNumbers);
  }

  /**
   * Whether some leaf of a target has no source the run can name: not in the request, not a
   * record an output returned, not vouched for or held whole by a designated output
   * (provenance-source.ts). False when the run has no output (nothing to make it up from).
   */
  unsourced(value: unknown): boolean {
    if (this.#outputs.length === 0) return false;
    const { leaves, truncated } = collectLeaves(value, this.#opts.maxScanChars, false);
    if (truncated) return true;
    return !sourced(leaves, this.#outputs, this.#trusted, this.#opts.minToken);
  }

  /**
   * Whether a call with these arguments reads what the user designated: every value leaf is
   * in the user's request, or is a token a designated output vouches for (the user named a
   * message, the message names one page: the page is designated too).
   */
  designates(value: unknown): boolean {
    const { leaves, truncated } = collectLeaves(value, this.#opts.maxScanChars, false);
    if (truncated || leaves.length === 0) return false;
    return leaves.every((leaf) => {
      const norm = normalize(leaf.text);
      const c = compact(norm);
      if (c.length > 0 && this.#trusted.compact.includes(c)) return true;
      const t = norm.trim().replace(TRIM, "");
      const ids = this.#tokens.get(t);
      return ids !== undefined && this.#isEndorsed(t, ids);
    });
  }

  /**
   * Outputs that hold the whole of `value` (its letters and digits, at least `MIN_WHOLE`
   * of them) when the user's request does not: a short name picked from an output is found
   * here though it is too short for the substring matcher. An output whose text was not kept
   * (the run's text cap) counts as holding it (fail closed).
   */
  wholeValue(path: string, value: unknown): ProvenanceHit | undefined {
    if (this.#outputs.length === 0) return undefined; // no output can hold it
    const { leaves } = collectLeaves(value, this.#opts.maxScanChars, false);
    const ids = new Set<number>();
    for (const leaf of leaves) {
      const norm = normalize(leaf.text);
      const c = compact(norm);
      if (c.length < MIN_WHOLE || this.#trusted.compact.includes(c)) continue;
      const token = norm.trim().replace(TRIM, "");
      this.#outputs.forEach((o, i) => {
        // A whole field of a structured output is a record there, not something a stretch
        // of its text spelled out (a sender's name in a channel that also holds an injection).
        if (o.fields.has(c)) return;
        // A value the output vouches for as a target lies outside its flagged spans.
        if (this.#vouchesAsTarget(o, token)) return;
        // A flagged designated document names only what its injected blocks spell out.
        const named = o.injected ?? o.text;
        if (named === undefined || named.includes(c)) ids.add(i);
      });
    }
    return ids.size === 0 ? undefined : this.#hit(path, "value", "", [...ids]);
  }

  /** The user's original request: values found in it never inherit taint. */
  setTrusted(text: string): void {
    const n = normalize(text);
    this.#trustedText = n;
    this.#trusted = { compact: compact(n), words: wordsOf(n) };
    this.#trustedNumbers = proseNumbers([text]);
    const grams = new Set<number>();
    for (const leaf of compactRuns(n)) forEachGram(leaf, this.#k, (h) => grams.add(h));
    this.#trustedGrams = grams;
    this.#wanted = wantedKinds(n);
    this.#trustedDays = new Set(daysIn(text));
  }

  /**
   * Indexes a tool output carrying `labels`. Unlabelled outputs add nothing. Past
   * `maxOutputs` outputs the output is folded into the run's merged record instead. True
   * when this output is the first one folded because the run reached the cap (the result
   * that says so in the journal, `provenance_merged`).
   */
  addOutput(seq: number, data: unknown, labels: readonly TaintLabel[], origin: OutputOrigin = {}): boolean {
    if (labels.length === 0) return false;
    if (this.#outputs.length >= this.#maxOutputs) {
      this.#fold(seq, labels);
      const first = !this.#capped;
      this.#capped = true;
      return first;
    }
    const id = this.#outputs.length;
    const { leaves, truncated } = collectLeaves(data, this.#opts.maxCharsPerOutput);
    const input = { seq, data, leaves, truncated, labels, origin, minToken: this.#opts.minToken };
    this.#outputs.push(outputRecord(input, (chars) => this.#spend(chars)));
    if (this.#indexFingerprints(id, leaves) || truncated) this.#overflowed.push(id);
    return false;
  }

  /**
   * Folds an output past the cap, or one kept whole nowhere (`addOverflow`), into the run's
   * one merged record (created by the first fold, `mergedRecord`): its labels join the
   * record's, bounded (`mergedLabels`); nothing else of it is kept. The record is in
   * `#overflowed`, so any substantial value inherits its taint (fail closed): flooding a
   * run with results can neither grow its memory nor push an indexed value out.
   */
  #fold(seq: number, labels: readonly TaintLabel[]): void {
    const id = this.#merged;
    const merged = id === undefined ? undefined : this.#outputs[id];
    if (merged !== undefined) {
      merged.labels = mergedLabels(merged.labels, labels);
      return;
    }
    this.#merged = this.#outputs.length;
    this.#overflowed.push(this.#outputs.length);
    this.#outputs.push(mergedRecord(seq, labels));
  }

  /** Takes `chars` from the run's text budget; false (nothing taken) when it would overrun it. */
  #spend(chars: number): boolean {
    if (this.#textChars + chars > MAX_TEXT_CHARS) return false;
    this.#textChars += chars;
    return true;
  }

  /** Indexes the output's tokens and winnowed k-grams; true when the fingerprint cap cut it short. */
  #indexFingerprints(id: number, leaves: readonly Leaf[]): boolean {
    let full = false;
    for (const leaf of leaves) {
      for (const t of extractTokens(leaf.text, this.#opts.minToken)) {
        if (this.size >= this.#opts.maxFingerprints) {
          full = true;
          break;
        }
        const ids = this.#tokens.get(t.text);
        if (ids === undefined) this.#tokens.set(t.text, [id]);
        else if (ids[ids.length - 1] !== id) {
          ids.push(id);
          this.#postings++;
        }
      }
      for (const run of compactRuns(normalize(leaf.text))) {
        winnow(run, this.#k, this.#w, (h) => {
          if (this.size >= this.#opts.maxFingerprints) {
            full = true;
            return;
          }
          const first = this.#grams.get(h);
          if (first === undefined) this.#grams.set(h, id);
          else if (first !== id) {
            const more = this.#gramsMore.get(h);
            if (more === undefined) this.#gramsMore.set(h, [id]);
            else if (more[more.length - 1] !== id) more.push(id);
            else return;
            this.#postings++;
          }
        });
      }
    }
    return full;
  }

  /**
   * Records an output that could not be kept whole outside this index (the hooks' stored
   * outputs: past their caps, cut short, or failing their check; src/hooks/flow-outputs.ts):
   * its labels are folded into the run's one merged record, like an output past the cap, so
   * it lends its taint to every substantial value, holds every whole value and every date
   * (fail closed), and a flood of such outputs grows neither the records nor their labels.
   */
  addOverflow(seq: number, labels: readonly TaintLabel[]): void {
    if (labels.length > 0) this.#fold(seq, labels);
  }

  /**
   * Finds the parts of `value` that came from indexed outputs and not from the trusted
   * request. `failClosed`: a value too large to scan inherits the taint of every output.
   * `vouched` (flow control only, src/gate/flow.ts): a value equal to a structured output's
   * field, or a token a designated output vouches for, is not reported. Taint itself never
   * uses it: the value still came from output.
   */
  scan(value: unknown, failClosed = true, vouched = false): ProvenanceHit[] {
    if (this.#outputs.length === 0) return [];
    // Flow control judges values: the argument names of the object it passes are not values.
    const { leaves, truncated } = collectLeaves(value, this.#opts.maxScanChars, !vouched);
    const hits: ProvenanceHit[] = [];
    if (truncated && failClosed) {
      hits.push(
        this.#hit(
          "(parameters)",
          "overflow",
          "",
          this.#outputs.map((_, i) => i),
        ),
      );
      return hits;
    }
    const total = this.#outputs.length;
    for (const leaf of leaves) {
      const norm = normalize(leaf.text);
      if (vouched) {
        const dated = this.#datedHit(leaf);
        if (dated !== undefined) hits.push(dated);
      }
      if (vouched && this.#isField(compact(norm))) continue;
      const seen = new Set<number>();
      const endorsed: string[] = [];
      const domains = new Set<string>();
      const tokens = extractTokens(leaf.text, this.#opts.minToken);
      for (const t of tokens) {
        if (seen.size === total) break;
        const ids = this.#tokens.get(t.text);
        if (ids === undefined || this.#isTrustedToken(t)) continue;
        // The domain of a vouched address is part of it, not a value of its own (an injected
        // address on the same mail provider does not make the user's address copied).
        if (vouched && ((t.kind === "host" && domains.has(t.text)) || this.#isEndorsed(t.text, ids, true))) {
          endorsed.push(compact(t.text));
          if (t.kind === "email") domains.add(t.text.slice(t.text.indexOf("@") + 1));
          continue;
        }
        const fresh = ids.filter((i) => !seen.has(i));
        if (fresh.length === 0) continue;
        for (const i of fresh) seen.add(i);
        hits.push(this.#hit(leaf.path, t.kind, t.text, fresh, vouched));
      }
      let substantial = false;
      for (const run of withoutEndorsed(compactRuns(norm), endorsed)) {
        if (run.length >= this.#k) substantial = true;
        forEachGram(run, this.#k, (h, at) => {
          if (seen.size === total) return; // every output already found: nothing left to learn
          const first = this.#grams.get(h);
          if (first === undefined || this.#trustedGrams.has(h)) return;
          const ids: number[] = seen.has(first) ? [] : [first];
          const more = this.#gramsMore.get(h);
          if (more !== undefined) for (const i of more) if (!seen.has(i)) ids.push(i);
          if (ids.length === 0) return;
          for (const i of ids) seen.add(i);
          hits.push(this.#hit(leaf.path, "substring", run.slice(at, at + this.#k), ids, vouched));
        });
      }
      if (failClosed && (substantial || tokens.length > 0)) {
        const ids = this.#overflowed.filter((i) => !seen.has(i));
        if (ids.length > 0 && !this.#trusted.compact.includes(compact(norm))) {
          hits.push(this.#hit(leaf.path, "overflow", "", ids));
        }
      }
    }
    return hits;
  }

  /**
   * A leaf that is a date alone whose day some output's prose writes out and the user's
   * request does not: the output chose when the effect happens (provenance-dates.ts).
   */
  #datedHit(leaf: Leaf): ProvenanceHit | undefined {
    const days = dayOfValue(leaf.text).filter((d) => !this.#trustedDays.has(d));
    if (days.length === 0) return undefined;
    const ids: number[] = [];
    this.#outputs.forEach((o, i) => {
      if (o.merged === true || o.partial === true || days.some((d) => o.days.has(d))) ids.push(i);
    });
    return ids.length === 0 ? undefined : this.#hit(leaf.path, "date", days.join(","), ids, true);
  }

  /** The value is the whole of some structured output's field (see `Output.fields`). */
  #isField(c: string): boolean {
    return c.length > 0 && this.#outputs.some((o) => o.fields.has(c));
  }

  /**
   * Every output holding the token vouches for it (see `Output.endorsed`). `asTarget`: only
   * a single text the user named (a bill, a page) vouches for a call's target; free text
   * inside a structured output (one message among a channel's) only designates further reads.
   */
  #isEndorsed(text: string, ids: readonly number[], asTarget = false): boolean {
    return (
      ids.length > 0 &&
      ids.every((i) => {
        const o = this.#outputs[i];
        return o?.endorsed.has(text) === true && !(asTarget && o.structured);
      }) &&
      (!asTarget || this.#wantsKindOf(text))
    );
  }

  /** The output vouches for the token as a call's target (see `#isEndorsed`). */
  #vouchesAsTarget(o: Output, token: string): boolean {
    return o.endorsed.has(token) && !o.structured && this.#wantsKindOf(token);
  }

  /** The request asks for a value of the token's kind (an e-mail address of an e-mail token, …). */
  #wantsKindOf(text: string): boolean {
    const kinds = extractTokens(text, this.#opts.minToken)
      .filter((t) => t.text === text)
      .map((t) => t.kind);
    // An account's digit run counts as the account; an address's domain as the address.
    return kinds.some(
      (k) =>
        this.#wanted.has(k) ||
        (k === "digits" && this.#wanted.has("iban")) ||
        (k === "host" && this.#wanted.has("email")),
    );
  }

  #isTrustedToken(t: Token): boolean {
    if (this.#trustedText.includes(t.text)) return true;
    // The user may have written it with other spacing or punctuation ("DE89 3704 ...").
    const c = compact(t.text);
    return c.length >= this.#opts.minToken && this.#trusted.compact.includes(c);
  }

  #hit(path: string, kind: ProvenanceKind, match: string, ids: number[], flow = false): ProvenanceHit {
    const outs = ids.map((i) => this.#outputs[i]!);
    return {
      path,
      kind,
      match: clip(match),
      outputs: outs.map((o) => o.seq),
      labels: mergeTaint(...outs.map((o) => o.labels)),
      ...(flow ? { designated: outs.some((o) => o.designated) } : {}),
    };
  }
}
