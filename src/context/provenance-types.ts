// The shapes of value-level provenance (provenance.ts): options (and the default cap on
// outputs), hits, indexed outputs.
import type { TaintLabel } from "../contracts/index.js";
import type { DayKey } from "./provenance-dates.js";

/** Outputs recorded one by one per run when the options name no cap (config: `provenance.maxOutputs`). */
export const DEFAULT_MAX_OUTPUTS = 1024;

export interface ProvenanceOptions {
  minSubstring: number;
  winnowWindow: number;
  minToken: number;
  maxCharsPerOutput: number;
  maxFingerprints: number;
  maxScanChars: number;
  /**
   * Outputs indexed one by one per run (default `DEFAULT_MAX_OUTPUTS`); later outputs are
   * folded into one merged record that fails closed (provenance.ts).
   */
  maxOutputs?: number;
}

export type ProvenanceKind =
  | "url"
  | "email"
  | "host"
  | "iban"
  | "digits"
  | "token"
  | "substring"
  | "value"
  | "date"
  | "overflow";

/** One argument (or output) that inherits taint, and why. */
export interface ProvenanceHit {
  /** Where in the scanned value: `to`, `body.lines[2]`, or `(parameters)` for the overflow rule. */
  path: string;
  kind: ProvenanceKind;
  /** The normalized matched text, truncated to 64 characters (empty for overflow). */
  match: string;
  /** Session sequence numbers of the outputs the value was found in. */
  outputs: number[];
  labels: TaintLabel[];
  /**
   * Flow control only (`scan` with `vouched`): some output holding the value came from a call
   * the user's request designated (every argument named in the request, or vouched for).
   */
  designated?: boolean;
}

export interface Output {
  seq: number;
  labels: TaintLabel[];
  /**
   * Tokens this output vouches for: the output of a call the user's request designated (every
   * argument named in the request), where the token is the only value of its kind (one IBAN,
   * one e-mail address, one host) in that output. Empty for any other output.
   */
  endorsed: Set<string>;
  /** The output's letters and digits (bounded; undefined when the run's text cap was reached). */
  text: string | undefined;
  /**
   * The whole values (letters and digits) of a structured output's fields and keys, up to
   * `MAX_FIELD` characters: an argument equal to one is a record the tool returned (an account
   * in a transaction list, a channel name), not something a stretch of free text chose.
   */
  fields: Set<string>;
  /** A mapping or list (items of many authors) rather than one text. */
  structured: boolean;
  /** The output of a call the user's request designated (`OutputOrigin.designated`). */
  designated: boolean;
  /** The days the output's prose writes out (provenance-dates.ts). */
  days: Set<DayKey>;
  /** The numbers the output's prose writes out (`proseNumbers`, provenance-source.ts). */
  numbers: Set<string>;
  /** A flagged designated output's prose numbers outside its injected blocks (when located). */
  ownNumbers?: Set<string>;
  /**
   * A flagged designated output whose injected blocks were located: their letters and digits
   * (instruction-spans.ts). Only these count as named by a flagged result (`wholeValue`);
   * undefined: the whole `text` counts.
   */
  injected?: string;
  /**
   * The run's merged record: every output past `maxOutputs`, folded into one. It keeps only
   * the union of their labels and counts as holding any substantial value (fail closed).
   */
  merged?: true;
  /**
   * The output was longer than `maxCharsPerOutput` and indexed in part: what it said past the
   * cut is unknown, so it counts as writing out every day (fail closed), like the merged record.
   */
  partial?: true;
}

/** How an output entered the run (`designated`: the call's arguments all came from the user's request). */
export interface OutputOrigin {
  designated?: boolean;
}
