// The communication gate of a runtime (src/messaging): the messaging identities from the
// configuration, the nonce store beside the journal (`<journal>.messages.db`, 0600; it
// persists so a restart does not reopen replays; memory for an in-memory journal), and
// the gate over the runtime's policy, journal and sessions. In distributed mode
// (`store: {kind: postgres}`) the nonces are the shared store's (PgNonceStore), so a message
// accepted by one replica is refused as a replay by every other. Without a `messaging`
// section the directory is empty and every message is refused (ERR_MESSAGE_SENDER_UNKNOWN).
// Waiting messages persist (issue 37): in the same file (`inbox_items`), or in the shared
// store's `inbox_items` in distributed mode; `restoreMessaging` loads them before serving.
import type { SessionStore } from "../context/index.js";
import { RuntimeError } from "../contracts/index.js";
import type { GatePolicy, PrincipalConfig } from "../gate/index.js";
import type { Journal } from "../journal/index.js";
import {
  CommunicationGate,
  IdentityDirectory,
  type InboxStore,
  MemoryNonceStore,
  type NonceStore,
  registerMessageEventTypes,
  SqliteInboxStore,
  SqliteNonceStore,
} from "../messaging/index.js";
import type { RuntimeConfig } from "./config.js";

export interface RuntimeMessaging {
  gate: CommunicationGate;
  directory: IdentityDirectory;
  nonces: NonceStore;
  /** Where waiting messages persist (undefined: memory only). */
  inbox: (InboxStore & { close?(): void }) | undefined;
}

export function messagingFor(
  config: RuntimeConfig,
  parts: {
    policy: GatePolicy;
    journal: Journal;
    sessions: SessionStore;
    clock: () => number;
    /** The shared store's nonces (distributed mode): used in place of the node-local file. */
    sharedNonces?: NonceStore | undefined;
    /** The shared store's inbox (distributed mode): used in place of the node-local file. */
    sharedInbox?: InboxStore | undefined;
  },
): RuntimeMessaging {
  registerMessageEventTypes();
  const m = config.messaging;
  const directory = new IdentityDirectory();
  for (const [id, pem] of Object.entries(m?.identities ?? {})) {
    try {
      directory.registerPem(id, pem);
    } catch (err) {
      throw new RuntimeError(
        "ERR_RUNTIME_CONFIG_INVALID",
        `messaging.identities.${id}: not Ed25519 + X25519 public keys`,
        {
          cause: err,
        },
      );
    }
  }
  const path =
    m?.nonceStore ?? (config.journal.path === ":memory:" ? undefined : `${config.journal.path}.messages.db`);
  const nonces: NonceStore =
    parts.sharedNonces ??
    (path === undefined || m === undefined ? new MemoryNonceStore() : SqliteNonceStore.open(path));
  const inbox: RuntimeMessaging["inbox"] =
    parts.sharedInbox ?? (path === undefined || m === undefined ? undefined : SqliteInboxStore.open(path));
  const principals = config.gate.principals;
  const principal = (id: string): PrincipalConfig | undefined =>
    typeof principals === "function"
      ? principals(id)
      : Object.hasOwn(principals, id)
        ? principals[id]
        : undefined;
  const gate = new CommunicationGate({
    directory,
    policy: parts.policy,
    principal,
    sessions: parts.sessions,
    journal: parts.journal,
    nonces,
    clock: parts.clock,
    ...(config.gate.tenantId !== undefined ? { tenantId: config.gate.tenantId } : {}),
    ...(m?.skewMs !== undefined ? { skewMs: m.skewMs } : {}),
    ...(m?.maxDepth !== undefined ? { maxDepth: m.maxDepth } : {}),
    inbox: { ...m?.inbox, ...(inbox !== undefined ? { store: inbox } : {}) },
  });
  return { gate, directory, nonces, inbox };
}
