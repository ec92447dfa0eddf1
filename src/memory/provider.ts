// The memory firewall as a local tool provider of the MCP gateway (`memoryProvider`): the
// four memory contracts (toolClass `memory`, action = operation) are served beside the
// upstream tools. The gateway authorizes each call through the Gate and hands over the
// granted ticket; the provider runs the operation under that ticket
// (`MemoryFirewall.granted`), so there is one decision per call and no call without one.
// The shape is the gateway's `LocalToolProvider` (structural: this layer does not import
// the gateway's).
import type { TaintLabel } from "../contracts/index.js";
import type { ExecutionTicket } from "../gate/index.js";
import type { CompiledTool, ToolClassification } from "../tools/index.js";
import { MEMORY_OPS, MEMORY_TOOL_NAMES, memoryContracts } from "./contracts.js";
import type { MemoryFirewall } from "./firewall.js";

export type MemoryProviderResult =
  | { ok: true; output: unknown; taint: TaintLabel[]; classification?: string }
  | { ok: false; code: string; message: string };

export interface MemoryToolProvider {
  readonly name: "memory";
  tools(): readonly { tool: CompiledTool; classification: ToolClassification }[];
  execute(
    ticket: ExecutionTicket,
    tool: CompiledTool,
    options: { signal: AbortSignal; principalId: string; runId: string; taint: readonly TaintLabel[] },
  ): Promise<MemoryProviderResult>;
  /** Closes the firewall's store (the gateway closes its providers when it closes). */
  close(): void;
}

/** The memory tools of `fw` for the MCP gateway (`GatewayOptions.providers`). */
export function memoryProvider(fw: MemoryFirewall): MemoryToolProvider {
  const contracts = memoryContracts();
  const tools = MEMORY_OPS.map((op) => {
    const c = contracts.get(MEMORY_TOOL_NAMES[op]);
    if (c === undefined) throw new Error(`memory contract ${op} missing`);
    return { tool: c.tool, classification: { toolClass: "memory", action: op } };
  });
  return {
    name: "memory",
    tools: () => tools,
    async execute(ticket, tool, o) {
      const m = contracts.get(tool.name);
      if (m === undefined || m.tool !== tool)
        return { ok: false, code: "ERR_MEMORY_DENIED", message: `${tool.name} is not a memory tool` };
      const r = await fw.granted(m.op, ticket, {
        principalId: o.principalId,
        runId: o.runId,
        taint: o.taint,
      });
      if (!r.ok) {
        const why = r.reasonCodes !== undefined ? ` (${r.reasonCodes.join(", ")})` : "";
        return { ok: false, code: r.code, message: `${r.message}${why}` };
      }
      return {
        ok: true,
        output: { value: r.value, taint: r.taint },
        taint: r.report.taintLabels ?? [],
        ...(r.report.classification !== undefined ? { classification: r.report.classification } : {}),
      };
    },
    close: () => fw.close(),
  };
}
