// Public face of the contracts layer: wire records, canonical JSON, hashing, ids, errors.
export {
  assertWellFormed,
  type CanonicalOptions,
  canonicalBytes,
  canonicalJson,
  DEFAULT_MAX_DEPTH,
  isSha256Hash,
  SHA256_HASH_PATTERN,
  type Sha256Hash,
  sha256Hex,
  sha256Of,
} from "./canonical-json.js";
export {
  CanonicalJsonError,
  CliError,
  ContractError,
  CryptoError,
  ERROR_CODES,
  type ErrorFamily,
  hasErrorCode,
  IntegrityError,
  isWardenErrorCode,
  JournalError,
  PolicyError,
  ToolError,
  WardenError,
  type WardenErrorCode,
  type WardenErrorOptions,
} from "./errors.js";
export {
  BUILTIN_TOOL_CLASSES,
  DECISIONS,
  Decision,
  GateRequest,
  type GateRequestInput,
  TAINT_SOURCES,
  TaintLabel,
  TaintSource,
} from "./gate-request.js";
export {
  formatTraceparent,
  newSpanId,
  newTraceId,
  parseTraceparent,
  SPAN_ID_PATTERN,
  TRACE_ID_PATTERN,
  type TraceParent,
  UUID_PATTERN,
  uuidv4,
  uuidv7,
  uuidv7Time,
} from "./ids.js";
export { parseStrictJson, type StrictJsonOptions } from "./strict-json.js";
