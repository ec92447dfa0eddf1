// Public face of the tools layer: ToolClad-compatible tool contracts — manifest parsing,
// typed argument validation, invocation templates, output validation, the model's view,
// and the contract registry. Integrity (signing, pinning) is in ./integrity.
export type { ArgValue } from "./arg-types.js";
export { contractToCanonical } from "./canonical.js";
export { classifyContract, type ToolClassification } from "./classify.js";
export { type CompiledTool, type CompileResult, compileContract, RUNTIME_VARIABLES } from "./compile.js";
export {
  type ApaeToolSpec,
  type ArgSpec,
  BUILTIN_TYPES,
  type BuiltinType,
  type CommandSpec,
  type CustomType,
  type HttpSpec,
  JitSecretSchema,
  type JitSecretSpec,
  type McpSpec,
  type OutputSpec,
  type ScopeSpec,
  type ToolContract,
  type ToolContractInput,
  ToolContractSchema,
} from "./contract-schema.js";
export {
  buildDiscoveryDocument,
  buildRevocationDocument,
  CONTRACT_LOADED_EVENT,
  CONTRACT_REFUSED_EVENT,
  type ContractIntegrityOptions,
  type ContractLoadEvent,
  type ContractLoadedBody,
  ContractLoadedBodySchema,
  type ContractRefusedBody,
  ContractRefusedBodySchema,
  type ContractSignatureFile,
  contractAsSignedSchema,
  contractEventType,
  type DiscoveryDocument,
  discoveryFromData,
  fetchJsonDocument,
  type HashMode,
  type IntegrityCode,
  type IntegrityResult,
  offerPins,
  type PinEntry,
  PinStore,
  parseDiscoveryDocument,
  parseRevocationDocument,
  parseTrustBundle,
  type RevocationDocument,
  readSignatureFile,
  revocationFromData,
  type SharedPins,
  schemapinCanonical,
  signContract,
  signContractFile,
  signSchemaPin,
  signTrustBundle,
  type TrustBundle,
  type TrustConfig,
  TrustConfigSchema,
  type TrustMode,
  type TrustOptions,
  TrustStore,
  type TrustSummary,
  type Verified,
  verifyContractIntegrity,
  verifySignedSchema,
  verifyTrustBundle,
  wellKnownUrl,
  writeFileAtomic,
  writeSignatureFile,
} from "./integrity/index.js";
export {
  type BuildFailure,
  type BuildOptions,
  type BuildResult,
  buildInvocation,
  describeInvocation,
  type ExecInvocation,
  type HttpInvocation,
  type Invocation,
  type McpInvocation,
  prepareInvocation,
  type ResolvedHttpRequest,
  type RuntimeValues,
  resolveHttpRequest,
  type SecretRef,
  type Segment,
  secretAliasEnvName,
  secretEnvName,
  secretValue,
} from "./invocation.js";
export { JSON_ARG_LIMITS, type JsonValue } from "./json-arg.js";
export {
  type ContractFailure,
  loadContract,
  loadProjectTypes,
  MAX_MANIFEST_BYTES,
  type ParseOptions,
  type ParseResult,
  parseContract,
} from "./manifest.js";
export { type ModelTool, toModelTool } from "./model-view.js";
export { type Cidr, ipInCidr, matchHostPattern, parseCidr, parseIp, type ScopeInput } from "./net.js";
export { type OutputOptions, type OutputResult, parseOutput } from "./output.js";
export {
  ContractRegistry,
  MANIFEST_SUFFIX,
  PROJECT_TYPES_FILE,
  type RegistryOptions,
  type RejectedContract,
  type VerifiedContract,
} from "./registry.js";
export {
  contractFromSchema,
  type SchemaContract,
  type SchemaContractOptions,
  type SchemaToolDescription,
  usableToolName,
} from "./schema-contract.js";
export { loadContractsShared, type SharedTrustedLoad } from "./shared-load.js";
export { hasShellMetacharacter, INVISIBLE_CHARS_SOURCE, SHELL_METACHARACTERS } from "./text-safety.js";
export {
  ContractLoadRefusedError,
  loadContractsTrusted,
  type TrustedLoad,
  type TrustedLoadOptions,
} from "./trusted-load.js";
export {
  type ArgRejection,
  type ArgsResult,
  type ValidatedArgs,
  type ValidateOptions,
  validateArgs,
} from "./validate.js";
