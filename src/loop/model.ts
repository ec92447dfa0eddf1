// The model side of the ORGA loop: what an adapter is given (the conversation and the
// model-visible tool schemas derived from contracts, never invocation templates) and
// what it returns (text and/or proposed tool calls, with token usage). Everything an
// adapter returns is untrusted model output: arguments that are not valid JSON are kept
// as a coded failure for the loop to feed back, never thrown.
import { parseStrictJson } from "../contracts/index.js";

/** The model's view of one tool: name, description and JSON Schemas. No endpoints, no commands. */
export interface ModelTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
}

export interface ToolCallMessagePart {
  id: string;
  name: string;
  /** The arguments as the model wrote them (JSON text), echoed back verbatim. */
  argumentsJson: string;
}

export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | { role: "assistant"; content: string | null; toolCalls?: ToolCallMessagePart[] }
  | { role: "tool"; toolCallId: string; name: string; content: string };

/** Parsed tool-call arguments, or why they could not be parsed. */
export type ProposedArguments =
  | { ok: true; value: Record<string, unknown> }
  | { ok: false; code: "ERR_MODEL_TOOL_ARGUMENTS"; message: string; raw: string };

export interface ProposedToolCall {
  id: string;
  name: string;
  arguments: ProposedArguments;
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

export interface ModelResponse {
  /** Text the model produced; with no tool calls it is the final answer. */
  text: string | null;
  toolCalls: ProposedToolCall[];
  usage: TokenUsage;
  /** The provider's stop reason, for the record only. */
  finishReason?: string;
}

export interface ModelRequest {
  messages: readonly ChatMessage[];
  tools: readonly ModelTool[];
}

export interface ModelCallOptions {
  /** Aborts the call (time budget, caller cancellation). */
  signal?: AbortSignal;
}

/** Anything that turns a conversation into the model's next turn. */
export interface ModelAdapter {
  /** A short description for the journal (`openai:gpt-4o-mini`, `scripted:demo.json`). */
  readonly id: string;
  complete(request: ModelRequest, options?: ModelCallOptions): Promise<ModelResponse>;
}

const MAX_ARGUMENTS_CHARS = 1_048_576;

/**
 * Parses tool-call arguments strictly: a JSON object, no duplicate keys (a parser
 * differential would let the model show the Gate one value and the executor another),
 * no `__proto__`, bounded size.
 */
export function parseToolArguments(raw: string): ProposedArguments {
  const text = raw.trim() === "" ? "{}" : raw;
  let value: unknown;
  try {
    value = parseStrictJson(text, { maxLength: MAX_ARGUMENTS_CHARS, maxDepth: 64 });
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    return {
      ok: false,
      code: "ERR_MODEL_TOOL_ARGUMENTS",
      message: `tool arguments are not valid JSON${typeof code === "string" ? ` (${code})` : ""}`,
      raw: raw.slice(0, 4096),
    };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return {
      ok: false,
      code: "ERR_MODEL_TOOL_ARGUMENTS",
      message: "tool arguments must be a JSON object",
      raw: raw.slice(0, 4096),
    };
  }
  return { ok: true, value: value as Record<string, unknown> };
}
