// The memory firewall as MCP-style tools, for the MCP gateway (and any other host that
// serves tools): one definition per operation, built from its contract's model view, and
// a handler that goes through the firewall, so every call is a Gate decision under the
// calling session's principal and run. The handler never trusts the arguments' shape:
// they are checked here and then again by the contract at the Gate.
import { type ModelTool, toModelTool } from "../tools/index.js";
import { MEMORY_OPS, MEMORY_TOOL_NAMES, type MemoryOp, memoryContracts } from "./contracts.js";
import type { MemoryFirewall } from "./firewall.js";
import type { MemoryCaller, MemoryResult } from "./types.js";

/** What a handler returns: a JSON value to show the agent, and whether it is an error. */
export interface MemoryToolResult {
  isError: boolean;
  /** On success the operation's value with its taint; on failure `{ code, message, reasonCodes? }`. */
  content: Record<string, unknown>;
}

export interface MemoryTool {
  definition: ModelTool;
  op: MemoryOp;
  /** Runs the operation for `caller` (the gateway's authenticated principal and its run). */
  handle(caller: MemoryCaller, args: unknown): Promise<MemoryToolResult>;
}

function asRecord(args: unknown): Record<string, unknown> {
  return typeof args === "object" && args !== null && !Array.isArray(args)
    ? (args as Record<string, unknown>)
    : {};
}

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

function shape<T>(r: MemoryResult<T>): MemoryToolResult {
  if (r.ok) return { isError: false, content: { value: r.value as unknown, taint: r.taint } };
  return {
    isError: true,
    content: {
      code: r.code,
      message: r.message,
      ...(r.reasonCodes !== undefined ? { reasonCodes: r.reasonCodes } : {}),
    },
  };
}

function run(
  fw: MemoryFirewall,
  op: MemoryOp,
  caller: MemoryCaller,
  a: Record<string, unknown>,
): Promise<MemoryResult<unknown>> {
  switch (op) {
    case "write": {
      const scope = a.scope === "shared" ? "shared" : "private";
      return fw.write(caller, { content: str(a.content), classification: str(a.classification), scope });
    }
    case "read":
      return fw.read(caller, str(a.id));
    case "search":
      return fw.search(caller, str(a.query), typeof a.limit === "number" ? a.limit : 10);
    case "delete":
      return fw.delete(caller, str(a.id));
  }
}

/** The four memory tools over a firewall (definitions from the shipped contracts). */
export function memoryTools(fw: MemoryFirewall): MemoryTool[] {
  const contracts = memoryContracts();
  return MEMORY_OPS.map((op) => {
    const c = contracts.get(MEMORY_TOOL_NAMES[op]);
    if (c === undefined) throw new Error(`memory contract ${op} missing`);
    return {
      op,
      definition: toModelTool(c.tool),
      handle: async (caller, args) => shape(await run(fw, op, caller, asRecord(args))),
    };
  });
}
