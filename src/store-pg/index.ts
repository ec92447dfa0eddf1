// The shared PostgreSQL store (distributed mode, docs/distributed.md): versioned
// migrations and the start check, the journal (a chain per replica with cross-chain
// checkpoints, or the one global chain), and the stateful
// stores every replica must share (principal state, budgets and reservations with
// capability use counts, the step-up and deferred queues, message nonces, trust tables, AgentPin, MCP tool,
// SchemaPin contract-key and hook source TOFU pins, the ECT
// ledger's jti index), each with atomic SQL.
export { APPROVAL_CHANNEL, type PgApprovalOptions, PgApprovalQueue } from "./approvals.js";
export {
  ChainCheckpointer,
  type ChainHead,
  type CheckpointerOptions,
  chainInputs,
  chainNames,
  listChains,
  type PgChainInput,
} from "./checkpoint.js";
export {
  inTransaction,
  isUnavailable,
  openPool,
  type PgStoreConfig,
  type PgTlsOptions,
  resolveUrl,
  sslOf,
  storeError,
} from "./connect.js";
export {
  CONSOLE_KEY_CHANNEL,
  type ConsoleKeyInsert,
  type ConsoleKeyRow,
  PgConsoleKeys,
} from "./console-keys.js";
export { DEFER_CHANNEL, type PgDeferOptions, PgDeferQueue } from "./deferred.js";
export { PgEctIndex } from "./ect-index.js";
export { FleetRateLedger } from "./fleet-rate.js";
export { type IdempotencyClaim, PgIdempotencyKeys } from "./idempotency.js";
export { PgInboxStore } from "./inbox-store.js";
export { type PgJournalOptions, PgJournalStore } from "./journal-store.js";
export { PgKeyPins } from "./key-pins.js";
export { PgBudgetLedger, type PgLedgerOptions } from "./ledger.js";
export { PgMcpPins } from "./mcp-pins.js";
export {
  checkSchema,
  MIGRATIONS,
  type MigrateResult,
  type Migration,
  migrate,
  SCHEMA_VERSION,
} from "./migrations.js";
export { openPgNode, type PgNode, type PgNodeConfig } from "./node.js";
export { PgPrincipalTaintStore } from "./principal-taint.js";
export { PgRevocationFloors } from "./revocation-floors.js";
export {
  PgRunRegistry,
  type RebuiltRun,
  type RunFence,
  type RunLocation,
  type RunRegistryOptions,
} from "./runs.js";
export { type ChainSnapshot, chainSnapshot } from "./snapshot.js";
export { type NonceOptions, PgNonceStore, PgPrincipalStateStore } from "./state-stores.js";
export {
  PgTofuPins,
  TOFU_PIN_KINDS,
  type TofuPin,
  type TofuPinKind,
  type TofuPinsOfKind,
} from "./tofu-pins.js";
export { PgTrustStore, TRUST_CHANNEL } from "./trust-store.js";
export { parseTrustPayload, TrustWatcher, type TrustWatchOptions } from "./trust-watch.js";
export type { SharedQueueOptions } from "./verdict-rows.js";
export {
  type ListenOptions,
  PgListener,
  PRINCIPAL_CHANNEL,
  PrincipalWatcher,
  type WatchOptions,
} from "./watch.js";
