// Public face of the tools layer: ToolClad-compatible tool contracts — manifest parsing,
// typed argument validation, invocation templates, output validation, the model's view.
export { contractToCanonical } from "./canonical.js";
export {
  type ArgSpec,
  BUILTIN_TYPES,
  type BuiltinType,
  type CommandSpec,
  type CustomType,
  type HttpSpec,
  type McpSpec,
  type OutputSpec,
  type ScopeSpec,
  type ToolContract,
  type ToolContractInput,
  ToolContractSchema,
} from "./contract-schema.js";
