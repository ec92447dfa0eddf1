// The tool class and action a contract stands for, from its backend. The Gate holds a
// request that names a contract to this, so a POST contract cannot reach policy
// labelled as an `http get`; the loop uses it to label the model's proposals.
import type { CompiledTool } from "./compile.js";

export interface ToolClassification {
  toolClass: string;
  action: string;
  /**
   * The arguments that direct the call's effect (docs/threat-model.md#flow-control): who
   * receives, pays, is invited or removed, which place is reached, which secret is set. The
   * Gate reports where their values came from to policy (`flow`). Absent: no argument is a
   * target, and only addresses found inside any argument count.
   */
  targets?: readonly string[];
}

/** http → `http`/<method lowercased>, exec → `shell`/`exec`, mcp → `mcp`/`call`. */
export function classifyContract(tool: CompiledTool): ToolClassification {
  const b = tool.backend;
  if (b.kind === "http") return { toolClass: "http", action: b.method.toLowerCase() };
  if (b.kind === "exec") return { toolClass: "shell", action: "exec" };
  return { toolClass: "mcp", action: "call" };
}
