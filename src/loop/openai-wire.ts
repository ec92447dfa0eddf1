// The chat-completions wire format of the OpenAI-compatible adapter (openai-adapter.ts): the
// response schema a provider's answer is checked with, and the request's messages and tools.
import { z } from "zod";
import type { ChatMessage, ModelTool } from "./model.js";

const ToolCallSchema = z.looseObject({
  id: z.string().max(256).optional(),
  type: z.literal("function").optional(),
  function: z.looseObject({
    name: z.string().min(1).max(256),
    arguments: z.string().max(1_048_576).nullish(),
  }),
});

export const ResponseSchema = z.looseObject({
  choices: z
    .array(
      z.looseObject({
        message: z.looseObject({
          role: z.string().optional(),
          content: z.string().nullish(),
          tool_calls: z.array(ToolCallSchema).max(256).nullish(),
        }),
        finish_reason: z.string().max(64).nullish(),
      }),
    )
    .min(1),
  usage: z
    .looseObject({
      prompt_tokens: z.number().int().min(0),
      completion_tokens: z.number().int().min(0),
    })
    .nullish(),
});

export function toWireMessage(m: ChatMessage): Record<string, unknown> {
  switch (m.role) {
    case "assistant":
      return {
        role: "assistant",
        content: m.content,
        ...(m.toolCalls?.length
          ? {
              tool_calls: m.toolCalls.map((c) => ({
                id: c.id,
                type: "function",
                function: { name: c.name, arguments: c.argumentsJson },
              })),
            }
          : {}),
      };
    case "tool":
      return { role: "tool", tool_call_id: m.toolCallId, content: m.content };
    default:
      return { role: m.role, content: m.content };
  }
}

export function toWireTool(t: ModelTool): Record<string, unknown> {
  return {
    type: "function",
    function: { name: t.name, description: t.description, parameters: t.inputSchema },
  };
}
