// A governed tool: one Warden contract, as a framework sees a tool (name, description,
// a zod schema of its typed parameters) and as Warden runs it (every call through the
// target's Gate, one outcome union back). The framework adapters only reshape this.
import type { z } from "zod";
import { AdapterError, type TaintLabel } from "../contracts/index.js";
import { loadContract, type ModelTool, toModelTool } from "../tools/index.js";
import { type HttpOptions, HttpTarget } from "./http.js";
import { type LibraryOptions, LibraryTarget } from "./library.js";
import type { GovernedOutcome } from "./outcome.js";
import { zodOfTool } from "./schema.js";
import type { CallOptions, GovernedTarget } from "./target.js";

/** Called after every call with its outcome (the taint Warden recorded, the decision id). */
export type OutcomeListener = (tool: string, outcome: GovernedOutcome) => void;

export interface GovernedTool {
  readonly name: string;
  readonly description: string;
  /** The model's view of the contract (JSON Schema of the typed parameters). */
  readonly modelTool: ModelTool;
  /** The same parameters as zod, for the framework's own check. */
  readonly schema: z.ZodObject;
  readonly target: GovernedTarget;
  call(args: Record<string, unknown>, options?: CallOptions): Promise<GovernedOutcome>;
}

export interface GovernedToolsOptions {
  onOutcome?: OutcomeListener;
}

/** A target in library mode (`{runtime, principalId, …}`) or HTTP mode (`{url, token, tools, …}`). */
export type TargetOptions = LibraryOptions | HttpOptions;

export function governedTarget(o: TargetOptions | GovernedTarget): GovernedTarget {
  if ("call" in o) return o;
  return "runtime" in o ? new LibraryTarget(o) : new HttpTarget(o);
}

/** The named contracts as governed tools; a name the target has no contract for is a coded error. */
export function governedTools(
  target: GovernedTarget,
  names: readonly string[],
  options: GovernedToolsOptions = {},
): GovernedTool[] {
  return names.map((name) => {
    const modelTool = target.modelTool(name);
    if (modelTool === undefined)
      throw new AdapterError("ERR_ADAPTER_CONFIG_INVALID", `no contract named ${name.slice(0, 64)}`);
    return {
      name,
      description: modelTool.description,
      modelTool,
      schema: zodOfTool(modelTool),
      target,
      async call(args, callOptions = {}) {
        const outcome = await target.call(name, args, callOptions);
        options.onOutcome?.(name, outcome);
        return outcome;
      },
    };
  });
}

/** The model's view of a contract file (for HTTP mode, where the contracts live with the sidecar). */
export function contractModelTool(file: string): ModelTool {
  const parsed = loadContract(file);
  if (!parsed.ok) throw new AdapterError("ERR_ADAPTER_CONFIG_INVALID", parsed.message);
  return toModelTool(parsed.tool);
}

/** Taint sources of an outcome, for logs and tests. */
export function taintSources(o: GovernedOutcome): string[] {
  const labels: TaintLabel[] = o.kind === "allowed" || o.kind === "fault" ? o.taint : [];
  return [...new Set(labels.map((l) => l.source))].sort();
}
