// Public face of the journal layer: the signed, hash-chained evidence log, its
// stores, and the offline verifier. Imports only contracts and crypto.

export type { AppendInput, BuiltAppend, BuiltinBodies } from "./append-input.js";
export {
  APPROVAL_STATEMENT_VERSION,
  type ApprovalCheck,
  type ApprovalFailure,
  type ApprovalReport,
  type ApprovalStatement,
  ApproverKeyring,
  approvalStatementBytes,
  checkApprovalSignature,
  PARAMETERS_CONDITION,
  type SignedApproval,
  signApproval,
  statementOf,
  verifyApprovalSignatures,
} from "./approval-signatures.js";
export {
  type ChainFailureReason,
  type ChainInput,
  type ChainSummary,
  type ChainsFailure,
  type ChainsOptions,
  type ChainsReport,
  verifyChains,
} from "./chains.js";
export { type EmbeddedStore, isLegacyJournal, migrateToSegments, openEmbeddedStore } from "./embedded.js";
export {
  ED25519_SIGNATURE_PATTERN,
  ENTRY_TIME_PATTERN,
  EVENT_TYPE_PATTERN,
  entryHash,
  entryJson,
  GENESIS_HASH,
  hashAndSignedText,
  hashedText,
  type JournalEntry,
  JournalEntrySchema,
  type JournalHead,
  KEY_ID_PATTERN,
  RUN_ID_PATTERN,
  type SealedEntry,
  SIGNATURE_PATTERN,
  sealEntry,
  signedText,
} from "./entry.js";
export {
  type BodyCheck,
  builtinEventTypes,
  CHAIN_NAME_PATTERN,
  CHECKPOINT,
  type CheckpointBody,
  CheckpointSchema,
  defaultEventTypes,
  EventTypeRegistry,
  KEY_ROTATED,
  MAX_CHECKPOINT_HEADS,
  registerEventType,
  TAIL_CUT,
  type TailCutBody,
  TailCutSchema,
} from "./event-types.js";
export {
  HEAD_KIND,
  type HeadCheck,
  parseSignedHead,
  type SignedHead,
  SignedHeadSchema,
  signHead,
  verifyHead,
} from "./head.js";
export { headOf, Journal, nextKeyId, type OpenJournalOptions, openJournal } from "./journal.js";
export { exportJsonl, MAX_LINE_LENGTH, readJsonl } from "./jsonl.js";
export {
  BATCH_ALG,
  type BatchSignature,
  batchMessage,
  batchTree,
  buildTree,
  formatBatchSignature,
  leafHash,
  MAX_BATCH_SIZE,
  MAX_PATH_LENGTH,
  MAX_SIGNATURE_LENGTH,
  parseBatchSignature,
  rootFromPath,
} from "./merkle.js";
export { openPrivateSqlite } from "./private-sqlite.js";
export { type CredentialKind, type Redaction, redactCredentials, redactString } from "./redact.js";
export {
  assertExtends,
  entryOrThrow,
  JOURNAL_COLUMNS,
  type JournalRow,
  normalizeTime,
  rowToEntry,
} from "./rows.js";
export {
  batchSealer,
  type Chained,
  entrySealer,
  type Sealer,
  type Tip,
  type Unchained,
} from "./sealer.js";
export {
  entryLine,
  SEGMENT_MAGIC,
  segmentHeader as segmentHeaderBytes,
  segmentName,
} from "./segment-format.js";
export { SegmentLog } from "./segment-log.js";
export { SegmentSource, segmentRecords } from "./segment-read.js";
export { SegmentJournalStore, type SegmentStoreOptions, segmentDir } from "./segment-store.js";
export { upgradeSegmentBytes, upgradeSegments } from "./segment-upgrade.js";
export { verifyInParallel, verifySource } from "./segment-verify.js";
export { applySensitive, type SensitiveMark } from "./sensitive.js";
export { type Durability, SqliteJournalStore, type SqliteStoreOptions } from "./sqlite-store.js";
export { type JournalQuery, type JournalStore, MalformedRecord, type TailCut } from "./store.js";
export {
  type JournalSource,
  type VerifyFailure,
  type VerifyFailureReason,
  type VerifyOptions,
  type VerifyReport,
  verifyJournal,
} from "./verify.js";
