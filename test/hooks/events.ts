// Builders of AARTS events for the hooks tests: a valid envelope plus the given fields.
import type { HookPoint } from "../../src/hooks/index.js";

export const SESSION = "sess-1";

export function ev(
  hook: HookPoint,
  fields: Record<string, unknown> = {},
  session = SESSION,
): Record<string, unknown> {
  return {
    hook_point: hook,
    session_id: session,
    timestamp: "2026-01-01T00:00:00.000Z",
    host_id: "test-host",
    aarts_version: "1",
    ...fields,
  };
}

export function tool(
  name: string,
  input: Record<string, unknown>,
  native?: string,
  session = SESSION,
): Record<string, unknown> {
  return ev(
    "PreToolUse",
    {
      turn_id: "t1",
      tool_name: name,
      tool_input: input,
      artifacts: [],
      ...(native ? { tool_name_native: native } : {}),
    },
    session,
  );
}

export function result(
  name: string,
  native: string,
  toolResult: unknown,
  session = SESSION,
): Record<string, unknown> {
  return ev(
    "PostToolUse",
    {
      turn_id: "t1",
      tool_name: name,
      tool_name_native: native,
      tool_input: {},
      artifacts: [],
      tool_result: toolResult,
    },
    session,
  );
}
