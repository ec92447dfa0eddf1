// The memory operations as tool contracts. Write, read, search and delete are Gate actions
// like any tool call: each is a ToolClad contract (typed, bounded arguments; the Gate
// validates them and records the schema hash) classified as toolClass `memory` with the
// operation as action, so policies match `memory:write` etc. Their `[mcp]` section names
// the pseudo-server `warden.memory` and is never dispatched: the memory executor serves
// them. String arguments get the contract layer's screening (no shell metacharacters,
// newlines or invisible characters), so a memory is one line of plain text.
import type { ContractLookup } from "../gate/index.js";
import { type CompiledTool, parseContract, type ToolClassification } from "../tools/index.js";

export type MemoryOp = "write" | "read" | "search" | "delete";

export const MEMORY_OPS: readonly MemoryOp[] = ["write", "read", "search", "delete"];

/** `memory_<op>`: the contract name of each operation. */
export const MEMORY_TOOL_NAMES: Readonly<Record<MemoryOp, string>> = {
  write: "memory_write",
  read: "memory_read",
  search: "memory_search",
  delete: "memory_delete",
};

const ID_ARG = (position: number) =>
  `[args.id]\nposition = ${position}\ntype = "string"\nrequired = true\nmax_length = 64\n` +
  `pattern = "^mem_[0-9a-f]{32}$"\ndescription = "The memory's id"\n`;

/** The manifests (TOML). `content` max_length is the firewall's hard ceiling; config may lower it. */
export const MEMORY_CONTRACTS: Readonly<Record<MemoryOp, string>> = {
  write: `[tool]
name = "memory_write"
version = "1.0.0"
description = "Store one line of plain text in the agent's governed memory."
timeout_seconds = 10
category = "reversible_write"
risk_tier = "medium"
[args.content]
position = 1
type = "string"
required = true
max_length = 16384
description = "The text to remember"
[args.classification]
position = 2
type = "string"
required = true
max_length = 64
pattern = "^[A-Za-z0-9_.-]{1,64}$"
description = "Data classification level of the text"
[args.scope]
position = 3
type = "enum"
allowed = ["private", "shared"]
default = "private"
description = "private: only this principal; shared: any principal cleared for it"
`,
  read: `[tool]
name = "memory_read"
version = "1.0.0"
description = "Read one memory by id."
timeout_seconds = 10
category = "read_only"
${ID_ARG(1)}`,
  search: `[tool]
name = "memory_search"
version = "1.0.0"
description = "Search the memories this agent may read (keyword ranking, embeddings when configured)."
timeout_seconds = 10
category = "read_only"
[args.query]
position = 1
type = "string"
required = true
max_length = 1024
description = "Words to look for"
[args.limit]
position = 2
type = "integer"
min = 1
max = 100
default = 10
description = "Results at most"
`,
  delete: `[tool]
name = "memory_delete"
version = "1.0.0"
description = "Delete one of this principal's memories."
timeout_seconds = 10
category = "irreversible_write"
risk_tier = "medium"
${ID_ARG(1)}`,
};

function compile(op: MemoryOp): CompiledTool {
  const name = MEMORY_TOOL_NAMES[op];
  const text =
    `${MEMORY_CONTRACTS[op]}[mcp]\nserver = "warden.memory"\ntool = "${name}"\n` +
    `[output]\nformat = "json"\n[output.schema]\ntype = "object"\n`;
  const r = parseContract(text, { source: `builtin:${name}` });
  // The texts above are constants: failing to compile them is a bug, not an input error.
  if (!r.ok) throw new Error(`memory contract ${name} does not compile: ${r.code}: ${r.message}`);
  return r.tool;
}

let compiled: Map<string, { tool: CompiledTool; op: MemoryOp }> | undefined;

/** The compiled memory contracts by name (compiled once per process). */
export function memoryContracts(): ReadonlyMap<string, { tool: CompiledTool; op: MemoryOp }> {
  compiled ??= new Map(MEMORY_OPS.map((op) => [MEMORY_TOOL_NAMES[op], { tool: compile(op), op }]));
  return compiled;
}

/**
 * A contract lookup that serves the memory contracts beside `base` (for
 * `RuntimeConfig.gate.contractLookup`). A deployment contract reusing a memory name is
 * shadowed by the built-in one, never the reverse.
 */
export function withMemoryContracts(base: ContractLookup | undefined): ContractLookup {
  const mem = memoryContracts();
  return { get: (name) => mem.get(name)?.tool ?? base?.get(name) };
}

/** Classifies the memory contracts as `memory:<op>`, everything else by `fallback`. */
export function memoryClassify(
  fallback: (tool: CompiledTool) => ToolClassification,
): (tool: CompiledTool) => ToolClassification {
  const mem = memoryContracts();
  return (tool) => {
    const m = mem.get(tool.name);
    return m !== undefined && m.tool === tool ? { toolClass: "memory", action: m.op } : fallback(tool);
  };
}
