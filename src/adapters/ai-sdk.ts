// Vercel AI SDK (`ai`, an optional peer dependency): each governed tool as
// `tool({description, inputSchema, execute, toModelOutput})`, keyed by contract name as a
// ToolSet. `execute` goes through the Gate and returns the whole outcome (the application
// reads decision id and recorded taint in the step's tool results); `toModelOutput` gives
// the model only the output, or `{error: {code, reason, decisionId}}` for a refusal.
import { type JSONValue, type Tool, tool } from "ai";
import {
  type GovernedOutcome,
  type GovernedTarget,
  type GovernedTool,
  type GovernedToolsOptions,
  governedTarget,
  governedTools,
  modelValueOf,
  type TargetOptions,
} from "./index.js";

export interface AiSdkToolsOptions extends GovernedToolsOptions {
  tools: readonly string[];
}

/** The model's view of an outcome as AI SDK tool output (JSON; a JSON-less output as text). */
export function aiSdkModelOutput(outcome: GovernedOutcome): { type: "json"; value: JSONValue } {
  const value = modelValueOf(outcome);
  try {
    return { type: "json", value: JSON.parse(JSON.stringify(value ?? null)) as JSONValue };
  } catch {
    return {
      type: "json",
      value: { error: { code: "ERR_ADAPTER_GATE_FAULT", reason: "unserialisable output" } },
    };
  }
}

export function aiSdkTool(governed: GovernedTool): Tool<Record<string, unknown>, GovernedOutcome> {
  return tool<Record<string, unknown>, GovernedOutcome>({
    description: governed.description,
    inputSchema: governed.schema,
    execute: (input, options) =>
      governed.call(input, options.abortSignal !== undefined ? { signal: options.abortSignal } : {}),
    toModelOutput: ({ output }) => aiSdkModelOutput(output),
  });
}

/** The named contracts as an AI SDK ToolSet over a library-mode runtime or a sidecar. */
export function aiSdkTools(
  target: TargetOptions | GovernedTarget,
  options: AiSdkToolsOptions,
): Record<string, Tool<Record<string, unknown>, GovernedOutcome>> {
  const tools = governedTools(governedTarget(target), options.tools, options);
  return Object.fromEntries(tools.map((t) => [t.name, aiSdkTool(t)]));
}
