// Output screening: the text of every reported result (the strings of its data, keys and
// leaves, bounded, and a failed call's error message) is scanned for instructions addressed to the agent with src/context's
// detector before the result enters the run. What the configured mode does with a finding:
//   off         nothing (the result is recorded as before)
//   flag        the finding is journaled with the result (rule ids, never the text) and the
//               result carries the taint label `instructions`, which policy can match
//   quarantine  as flag, and the run and its principal are quarantined read-only (trigger
//               `output_screening`): a new run id of the same principal stays quarantined
// Text past the bound is not scanned; a result that has some counts as a finding
// (`unscreened-excess`): what was not read cannot be vouched for.
import { boundedTextOf, INSTRUCTION_RULES, instructionFindings, MAX_SCAN_CHARS } from "../context/index.js";
import type { GateRequest, TaintLabel } from "../contracts/index.js";

export const SCREENING_MODES = ["off", "flag", "quarantine"] as const;
export type ScreeningMode = (typeof SCREENING_MODES)[number];

export interface OutputScreening {
  /** What a result carrying instructions addressed to the agent leads to (default `flag`). */
  instructions: ScreeningMode;
  /** Characters of one result's text that are scanned (default 1,000,000). */
  maxChars?: number | undefined;
}

/** The default when nothing is configured: findings are journaled and labelled. */
export const DEFAULT_OUTPUT_SCREENING: OutputScreening = Object.freeze({ instructions: "flag" });

/** The rule id a result with text past the bound is reported under. */
export const UNSCREENED_EXCESS = "unscreened-excess";

/** The taint source a flagged result carries. */
export const INSTRUCTIONS_TAINT = "instructions" as const;

export type ScreeningResult =
  | { kind: "clean" }
  | {
      kind: "finding";
      mode: Exclude<ScreeningMode, "off">;
      rules: string[];
      truncated: boolean;
      label: TaintLabel;
    };

const CLEAN: ScreeningResult = Object.freeze({ kind: "clean" });

/**
 * Screens a result's data and a failed call's error text under `config`; `clean` when off,
 * when there is neither, or nothing matched.
 */
export function screenOutput(
  config: OutputScreening | undefined,
  request: GateRequest,
  data: unknown,
  error?: string,
): ScreeningResult {
  const c = config ?? DEFAULT_OUTPUT_SCREENING;
  if (c.instructions === "off" || (data === undefined && error === undefined)) return CLEAN;
  const max = c.maxChars ?? MAX_SCAN_CHARS;
  const { text, truncated } = boundedTextOf(error === undefined ? data : [error, data], max);
  const rules = instructionFindings(text, INSTRUCTION_RULES, max);
  if (truncated) rules.push(UNSCREENED_EXCESS);
  if (rules.length === 0) return CLEAN;
  return {
    kind: "finding",
    mode: c.instructions,
    rules,
    truncated,
    label: { source: INSTRUCTIONS_TAINT, origin: request.tool ?? `${request.toolClass}:${request.action}` },
  };
}

/**
 * The rule ids a text matches, for screens outside a call's result (MCP metadata, a
 * sub-agent's answer, a notification): the same detector and normalisation.
 */
export function screenText(text: string, max = MAX_SCAN_CHARS): string[] {
  return instructionFindings(text, INSTRUCTION_RULES, max);
}

/** The quarantine reason of a finding: the tool and the rule ids (never the text). */
export function screeningReason(request: GateRequest, rules: readonly string[]): string {
  const tool = request.tool ?? `${request.toolClass}:${request.action}`;
  return `the output of ${tool} carried instructions addressed to the agent (${rules.join(", ")})`;
}
