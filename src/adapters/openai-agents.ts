// OpenAI Agents SDK for JS (`@openai/agents`, an optional peer dependency; its packages
// declare Node >= 22 but load on Node 20): each governed tool as a function `tool()`
// with the contract's parameters as zod, in the SDK's strict mode: an optional argument is
// nullable there, and a null is dropped before the Gate (it means "absent").
// `execute` goes through the Gate; the model reads the output, or the JSON
// `{error: {code, reason, decisionId}}` of a refusal as the tool's result, so the next
// turn can reason about it. Errors the SDK would swallow are not possible: the governed
// call answers every refusal and fault as a value.
import { type FunctionTool, tool } from "@openai/agents";
import {
  type GovernedTarget,
  type GovernedTool,
  type GovernedToolsOptions,
  governedTarget,
  governedTools,
  modelTextOf,
  type TargetOptions,
  withoutNulls,
  zodOfTool,
} from "./index.js";

export interface OpenAIAgentsToolsOptions extends GovernedToolsOptions {
  tools: readonly string[];
}

// biome-ignore lint/suspicious/noExplicitAny: the SDK's FunctionTool is generic over its run context.
export type AgentsTool = FunctionTool<any, any, string>;

export function openAIAgentsTool(governed: GovernedTool): AgentsTool {
  return tool({
    name: governed.name,
    description: governed.description,
    parameters: zodOfTool(governed.modelTool, { optional: "nullable" }),
    execute: async (input, _context, details) => {
      const outcome = await governed.call(
        withoutNulls(governed.modelTool, input as Record<string, unknown>),
        details?.signal !== undefined ? { signal: details.signal } : {},
      );
      return modelTextOf(outcome);
    },
  }) as AgentsTool;
}

/** The named contracts as OpenAI Agents tools over a library-mode runtime or a sidecar. */
export function openAIAgentsTools(
  target: TargetOptions | GovernedTarget,
  options: OpenAIAgentsToolsOptions,
): AgentsTool[] {
  return governedTools(governedTarget(target), options.tools, options).map(openAIAgentsTool);
}
