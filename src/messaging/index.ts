// Public face of the messaging layer: governed inter-agent messages (OATS §10). Sealed
// messages (Ed25519 signature, X25519 + HKDF-SHA256 + AES-256-GCM), the nonce store that
// refuses replays across restarts, the communication gate (policy, journal, DARE
// AgentMessageEnvelope), bounded inboxes, and the cross-agent context of a delegation.

export {
  CommunicationGate,
  type CommunicationGateOptions,
  type SubmitOutcome,
  type SubmitRefusal,
} from "./comm-gate.js";
export { buildEnvelope, verifyEnvelope } from "./envelope.js";
export {
  type CrossAgentContext,
  CrossAgentContextSchema,
  MESSAGE_REFUSED_EVENT,
  MESSAGE_SENT_EVENT,
  MessageRefusedBodySchema,
  MessageSentBodySchema,
  registerMessageEventTypes,
} from "./events.js";
export {
  exportMessagingKeys,
  generateMessagingKeys,
  IdentityDirectory,
  importMessagingKeys,
  type MessagingIdentity,
  type MessagingIdentityPem,
  type MessagingKeys,
  publicPem,
} from "./identity.js";
export type { Delivered, InboxOptions } from "./inbox.js";
export {
  type InboxStore,
  inboxRow,
  parseInboxRow,
  SqliteInboxStore,
  type StoredInboxItem,
} from "./inbox-store.js";
export {
  type ClaimResult,
  DEFAULT_MAX_NONCES,
  MemoryNonceStore,
  type NonceStore,
  SqliteNonceStore,
  type SyncNonceStore,
} from "./nonce-store.js";
export {
  DEFAULT_SKEW_MS,
  DEFAULT_TTL_MS,
  MAX_TTL_MS,
  type Opened,
  type OpenOptions,
  open,
  openText,
  type SealInput,
  seal,
  verifySealed,
} from "./seal.js";
export {
  darePayload,
  MAX_PAYLOAD_BYTES,
  type MessageHeader,
  PAYLOAD_TYPES,
  type PayloadType,
  PRIMITIVES,
  type Primitive,
  parseSealed,
  type SealedMessage,
  signingInput,
  WIRE_ALG,
  WIRE_VERSION,
} from "./wire.js";
