// LangChain.js (`@langchain/core`, an optional peer dependency): each governed tool as a
// native `tool()` (a DynamicStructuredTool) with the contract's parameters as its zod
// schema. Every call goes through the Gate. The model reads the output when allowed, and
// a ToolMessage with `status: "error"` holding `{error: {code, reason, decisionId}}` when
// it is not, so the next turn can reason about the refusal. The artifact is the whole
// outcome (decision id, recorded taint) for the application, never for the model.
import { ToolMessage } from "@langchain/core/messages";
import { type DynamicStructuredTool, tool } from "@langchain/core/tools";
import {
  type GovernedOutcome,
  type GovernedTarget,
  type GovernedTool,
  type GovernedToolsOptions,
  governedTarget,
  governedTools,
  modelTextOf,
  type TargetOptions,
} from "./index.js";

export interface LangChainToolsOptions extends GovernedToolsOptions {
  /** The contracts to expose (their names). */
  tools: readonly string[];
}

/** One governed tool as a LangChain tool (content and artifact: the text, then the outcome). */
export function langchainTool(governed: GovernedTool): DynamicStructuredTool {
  return tool(
    async (input: Record<string, unknown>, config) => {
      const outcome = await governed.call(
        input,
        config?.signal !== undefined ? { signal: config.signal } : {},
      );
      const text = modelTextOf(outcome);
      const callId = config?.toolCall?.id;
      if (outcome.kind === "allowed" || callId === undefined) return [text, outcome];
      const error = new ToolMessage({
        status: "error",
        content: text,
        artifact: outcome,
        tool_call_id: callId,
        name: governed.name,
      });
      return [error, outcome] as [ToolMessage, GovernedOutcome];
    },
    {
      name: governed.name,
      description: governed.description,
      schema: governed.schema,
      responseFormat: "content_and_artifact",
    },
  ) as DynamicStructuredTool;
}

/** The named contracts as LangChain tools over a library-mode runtime or a sidecar. */
export function langchainTools(
  target: TargetOptions | GovernedTarget,
  options: LangChainToolsOptions,
): DynamicStructuredTool[] {
  return governedTools(governedTarget(target), options.tools, options).map(langchainTool);
}
