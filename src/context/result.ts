// Checks and derivations for a call's observed result: validated executor input, the
// classification it counts as, and the taint labels its boundary attaches (Ari ATTACH).
import { ContextError, type GateRequest, type Sha256Hash, sha256Of, TaintLabel } from "../contracts/index.js";
import type { ResultInput } from "./facts.js";
import { finiteNonNegative, hostOf } from "./util.js";

/** Validates a result report; hashes its data unless a hash is given. Throws ERR_CONTEXT_INPUT_INVALID. */
export function checkResult(input: ResultInput): {
  labels: TaintLabel[];
  outputHash: Sha256Hash | undefined;
} {
  const labels = TaintLabel.array()
    .max(256)
    .safeParse(input.taintLabels ?? []);
  if (!labels.success) throw new ContextError("ERR_CONTEXT_INPUT_INVALID", "result taint labels are invalid");
  finiteNonNegative(input.tokens, "tokens");
  finiteNonNegative(input.cost, "cost");
  let outputHash = input.outputHash;
  if (outputHash === undefined && input.data !== undefined) {
    try {
      outputHash = sha256Of(input.data);
    } catch (err) {
      throw new ContextError("ERR_CONTEXT_INPUT_INVALID", "result data is not JSON data", { cause: err });
    }
  }
  return { labels: labels.data, outputHash };
}

/** The configured level, or the highest one when missing or unknown (fail closed). */
export function classificationOf(levels: readonly string[], claimed: string | undefined): string {
  return claimed !== undefined && levels.includes(claimed) ? claimed : levels[levels.length - 1]!;
}

/** Labels every output carries: `tool-output`, plus the tool class's boundary source if any. */
export function boundaryLabels(
  request: GateRequest,
  call: number,
  boundaries: Readonly<Record<string, TaintLabel["source"]>>,
): TaintLabel[] {
  const origin = request.tool ?? `${request.toolClass}:${request.action}`;
  const boundary: TaintLabel[] = [{ source: "tool-output", origin, propagatedFrom: `call:${call}` }];
  // A `class:action` key (`assistant:fetch`) is more specific than the class alone.
  const source = boundaries[`${request.toolClass}:${request.action}`] ?? boundaries[request.toolClass];
  if (source !== undefined) {
    boundary.push({ source, origin: hostOf(request.parameters) ?? origin, propagatedFrom: `call:${call}` });
  }
  return boundary;
}
