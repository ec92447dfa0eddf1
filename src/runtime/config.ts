// What a runtime is composed from. Entry points translate their own configuration (the
// sidecar's YAML, the CLI's flags, a library caller's object) into a RuntimeConfig; the
// composition root (compose.ts) is the only place that turns one into live objects.
import type { KeyObject } from "node:crypto";
import type { ContextConfig, ContextConfigInput, PrincipalStateStore } from "../context/index.js";
import type { KeyPair } from "../crypto/index.js";
import type { BreakerOptions, ObligationPorts, ResponseSnapshots } from "../executors/index.js";
import type {
  ContractLookup,
  DriftTracker,
  GatePolicy,
  OutputScreening,
  PrincipalConfig,
} from "../gate/index.js";
import type { ApproverKeyring } from "../journal/index.js";
import type { InboxOptions, MessagingIdentityPem } from "../messaging/index.js";
import type { PgNodeConfig } from "../store-pg/index.js";
import type { CompiledTool, ContractRegistry, ToolClassification } from "../tools/index.js";
import type { RuntimeAgentPinConfig } from "./agentpin.js";
import type { RuntimeApaeConfig } from "./apae.js";
import type { RuntimeExecutorsConfig } from "./executors.js";
import type { RuntimeNotificationsConfig } from "./notifications.js";
import type { RuntimeShadowConfig } from "./shadow.js";

export interface RuntimeJournalConfig {
  /** SQLite file (created 0600 when missing), or ":memory:". */
  path: string;
  /** Ed25519 key that signs entries, heads and HITL records. */
  signer: KeyPair;
  signatureMode?: "entry" | "batch";
  signingWorkers?: number;
  busyTimeoutMs?: number;
}

export interface RuntimeContractsConfig {
  /** Directory of `*.clad.toml` contracts. */
  dir: string;
  /** The `trust:` section (src/tools TrustConfigSchema); absent means mode off. */
  trust?: unknown;
  /** Relative trust key, pin and revocation paths resolve against this (absolute). */
  baseDir?: string;
  /**
   * Refuse to start when any manifest was rejected, also in trust mode off (the
   * sidecar). Default false: rejected manifests are reported in `contractsRejected`.
   */
  refuseRejected?: boolean;
}

export interface RuntimeGateConfig {
  /** Principals by id, or a resolver (the `warden gate` CLI without a configuration). */
  principals: Readonly<Record<string, PrincipalConfig>> | ((id: string) => PrincipalConfig | undefined);
  context?: ContextConfig | ContextConfigInput;
  tenantId?: string;
  environment?: "dev" | "test" | "prod";
  requireContract?: boolean;
  /** Who names runs: "runtime" (runs come from startRun and are bound to a principal) or "caller" (legacy). */
  runs?: "caller" | "runtime";
  /**
   * When the enforcing bundle's load is journaled: `start` (default) once per runtime;
   * `change` only when the journal's last record of it names another hash (one-shot hook
   * processes, which compose a runtime per host event on the same journal).
   */
  bundleJournal?: "start" | "change";
  /**
   * `omitted`: decision entries leave out parameter members at `false` or `""` and say so
   * (`parameters_defaults`): the hooks engine's requests, a fixed set of derived facts
   * mostly unset. Default `kept`: the parameters verbatim.
   */
  journalDefaults?: "kept" | "omitted";
  /** Deferral and step-up queue bounds; absent: the Gate's defaults. */
  approvals?: {
    maxDeferred: number;
    maxDeferredPerPrincipal?: number | undefined;
    maxPending?: number | undefined;
    maxPendingPerPrincipal?: number | undefined;
  };
  /** Contracts as the Gate sees them (default: the loaded registry). */
  contractLookup?: (registry: ContractRegistry | undefined) => ContractLookup;
  classify?: (tool: CompiledTool) => ToolClassification;
  /** Semantic drift scoring (docs/policy.md#semantic-drift); absent: not scored. */
  drift?: DriftTracker;
  /** Tool-result screening for instructions (docs/gate.md#output-screening); absent: `flag`. */
  outputScreening?: OutputScreening;
}

export interface RuntimeConfig {
  /** Policy files (.yaml/.yml/.json rules, .cedar), or an engine already built. */
  policy: readonly string[] | GatePolicy;
  /** A shadow bundle evaluated beside `policy`, deciding nothing (docs/policy.md#shadow-policies). */
  shadow?: RuntimeShadowConfig;
  /** Notifiers told of step-ups and `notify` obligations, and one-time approval links (docs/console.md#approvals-anywhere). */
  notifications?: RuntimeNotificationsConfig;
  contracts?: RuntimeContractsConfig;
  journal: RuntimeJournalConfig;
  gate: RuntimeGateConfig;
  /**
   * SQLite file holding principal state (quarantine), created 0600; it persists across
   * restarts. Default: `<journal path>.principals.db`, or memory for an in-memory journal.
   */
  principalState?: string;
  breaker?: BreakerOptions;
  /** The media this runtime executes (absent: none; a ticket for it is refused). */
  executors?: RuntimeExecutorsConfig;
  /** The agent the executors act for, recorded in evidence envelopes (single-agent CLI runs). */
  agentId?: string;
  /** APAE trust scoring (docs/trust.md): absent means off. */
  apae?: RuntimeApaeConfig;
  /** Delegated sub-agent runs (`runtime.startDelegatedRun`); without it every chain is refused. */
  delegation?: RuntimeDelegationConfig;
  /** Governed inter-agent messages (docs/identity.md#inter-agent-messages). */
  messaging?: RuntimeMessagingConfig;
  /**
   * Approver public keys (PEM, Ed25519) by approver principal id. When present, a step-up
   * decision must carry a signature by one of the approver's keys (docs/identity.md#signed-approvals).
   */
  approvers?: Readonly<Record<string, readonly string[]>>;
  /** Agent identity: AgentPin credentials accepted as principals (docs/identity.md). */
  identity?: { agentpin?: RuntimeAgentPinConfig };
  /**
   * Distributed mode (docs/distributed.md): the journal, principal state and capability use
   * counts in a shared PostgreSQL database whose schema `warden db migrate` applied.
   */
  store?: PgNodeConfig;
}

export interface RuntimeDelegationConfig {
  /** Keys trusted to sign a chain's first link (the makers). */
  roots: readonly KeyObject[];
  /** Most links in a chain (default 3: maker → deployer → agent → sub-agent). */
  maxDepth?: number;
}

export interface RuntimeMessagingConfig {
  /** Each agent's public signing (Ed25519) and agreement (X25519) keys, PEM, by principal id. */
  identities: Readonly<Record<string, MessagingIdentityPem>>;
  /** Nonce store file (default `<journal>.messages.db`). */
  nonceStore?: string;
  maxDepth?: number;
  skewMs?: number;
  inbox?: InboxOptions;
}

export interface RuntimeDeps {
  /** Milliseconds since the epoch for the Gate and the session store (tests). */
  clock?: () => number;
  /** Replaces the configured policy (fault-injection tests). */
  policy?: GatePolicy;
  /** Replaces the SQLite principal state store. */
  principalStore?: PrincipalStateStore;
  /** The notifier `notify` obligations need (absent: a notify obligation is unmet). */
  notify?: ObligationPorts["notify"];
  /** The replay recorder's snapshot store (src/evidence), handed to the executors. */
  snapshots?: ResponseSnapshots;
  /**
   * The approval queue's keyring, kept by the entry point so it can add keys later (the
   * console registers browser keys); `config.approvers` keys are added to it. Given, every
   * step-up verdict must be signed, as with `config.approvers`.
   */
  approverKeys?: ApproverKeyring;
}
