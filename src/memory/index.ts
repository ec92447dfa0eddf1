// Public face of the memory layer: the memory firewall (governed agent memory: write,
// read, search and delete as Gate actions on their contracts, taint kept across sessions,
// reads filtered by principal, run lineage and clearance, quarantine), its store, the
// retrieval ranking and Embedder port, the MCP-style tool definitions, and the text
// detector it shares with the AARTS hooks.
export {
  clearanceRank,
  levelRank,
  type MemoryConfig,
  type MemoryConfigInput,
  MemoryConfigSchema,
  parseMemoryConfig,
} from "./config.js";
export {
  MEMORY_CONTRACTS,
  MEMORY_OPS,
  MEMORY_TOOL_NAMES,
  type MemoryOp,
  memoryClassify,
  memoryContracts,
  withMemoryContracts,
} from "./contracts.js";
export {
  INJECTION_RULES,
  INSTRUCTION_RULES,
  type InjectionRule,
  scanText,
  type TextFindings,
  textOf,
} from "./detect.js";
export {
  MEMORY_DELETED,
  MEMORY_EVENT_TYPES,
  MEMORY_QUARANTINED,
  MEMORY_READ,
  MEMORY_REFUSED,
  MEMORY_WRITTEN,
  registerMemoryEventTypes,
} from "./events.js";
export { MemoryFirewall } from "./firewall.js";
export { type MemoryProviderResult, type MemoryToolProvider, memoryProvider } from "./provider.js";
export { bm25, cosine, MIN_SIMILARITY, rank, type Scored, tokenize } from "./search.js";
export { type MemoryRead, type MemoryRecord, MemoryRecordSchema, MemoryStore } from "./store.js";
export { type MemoryTool, type MemoryToolResult, memoryTools } from "./tools.js";
export type {
  GrantedCaller,
  GrantedResult,
  MemoryCaller,
  MemoryErrorCode,
  MemoryFirewallOptions,
  MemoryItem,
  MemoryResult,
  MemoryRuntime,
  WriteInput,
} from "./types.js";
