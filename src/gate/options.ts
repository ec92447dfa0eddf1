// What a Gate is built from (GateOptions and the ports it names), and the internal
// dependencies its stages share (GateDeps). Ports are structural: src/policy's bundle,
// src/journal's journal and src/tools' registry satisfy them.

import type { Prepared, Session, SessionStore } from "../context/index.js";
import type { DecisionId, PrincipalId, RunId, Sha256Hash } from "../contracts/index.js";
import type { KeyPair } from "../crypto/index.js";
import type { AppendInput, BuiltAppend, JournalEntry } from "../journal/index.js";
import type { Capability, PolicyInput, PolicyOutcome } from "../policy/index.js";
import type { CompiledTool, ToolClassification, ValidateOptions } from "../tools/index.js";
import type { Approvals } from "./approvals.js";
import type { CapabilityChecker, RunCeilings } from "./capability.js";
import type { DeferQueue } from "./defer.js";
import type { DriftTracker } from "./drift.js";
import type { PendingResults } from "./pending-results.js";
import type { OutputScreening } from "./screening.js";
import type { ShadowPolicy } from "./shadow.js";

/** What the Gate needs from a policy engine (src/policy's engine satisfies it). */
export interface GatePolicy {
  evaluate(input: PolicyInput): PolicyOutcome;
  readonly policyBundleHash: Sha256Hash;
  /** What the bundle is made of (src/policy's PolicyBundle has it); journaled on first use. */
  readonly summary?: { sources: readonly { name: string; kind: string; rules: number }[] };
}

/**
 * The journal as the Gate uses it (src/journal's Journal satisfies it): `appendBuilt` for
 * the built-in bodies the Gate builds itself (typed at compile time, not re-parsed), and
 * `append` for the DARE HITL record.
 */
export interface GateJournal {
  append(input: AppendInput): Promise<JournalEntry>;
  appendBuilt(input: BuiltAppend): Promise<JournalEntry>;
}

export interface PrincipalConfig {
  id: string;
  roles: string[];
  capabilities?: Capability[];
  maxCallsPerMinute?: number;
}

export interface ContractLookup {
  get(name: string): CompiledTool | undefined;
}

export interface GateOptions {
  policy: GatePolicy;
  /** A shadow bundle evaluated beside `policy`, deciding nothing; disagreements are journaled (shadow.ts). */
  shadow?: ShadowPolicy;
  journal: GateJournal;
  /** Ed25519 key that signs HITL decision records (usually the journal key). */
  signer: KeyPair;
  /** Principals by id, from configuration. An unknown principal is denied. */
  principals: Readonly<Record<string, PrincipalConfig>> | ((id: PrincipalId) => PrincipalConfig | undefined);
  contracts?: ContractLookup;
  /** Deny calls that name no contract (default false: Ari-style tool classes are allowed). */
  requireContract?: boolean;
  /**
   * The tool class and action a contract stands for (default: from its backend, see
   * `classifyContract`). A request naming a contract must carry exactly these, so a POST
   * contract cannot be presented to policy as a read.
   */
  classify?: (tool: CompiledTool) => ToolClassification;
  validateOptions?: ValidateOptions;
  sessions?: SessionStore;
  /**
   * Who names runs. `"caller"` (default, legacy): a request's runId opens a run on first
   * use, bound to its principal. `"runtime"`: the runId must be a run the runtime started
   * for that principal (`sessions.startRun`); anything else — unknown, ended, evicted or
   * another principal's — is denied `run_unknown` (journaled) and opens nothing.
   */
  runs?: "caller" | "runtime";
  approvals?: Approvals;
  defer?: DeferQueue;
  tenantId?: string;
  environment?: "dev" | "test" | "prod";
  ticketTtlMs?: number;
  /**
   * Parameters larger than this (bytes of canonical JSON, default 4096) are journaled as
   * `parameters: {}` plus `parameters_elided: { sha256, bytes, prefix }`.
   */
  journalParametersMaxBytes?: number;
  /**
   * Whether the journal's last record of the enforcing bundle already names this hash
   * (one-shot hook processes: each composes a Gate on the same journal). When it resolves
   * true the bundle is not journaled again; absent, rejected or false: it is journaled
   * before this Gate's first decision, as always (a decision entry names its bundle hash).
   */
  bundleRecorded?: (policyBundleHash: Sha256Hash) => Promise<boolean>;
  /**
   * Parameter members whose value is `false` or `""` are left out of the journaled
   * parameters, the entry saying so (`parameters_defaults: "omitted"`): for callers whose
   * requests carry a fixed set of derived facts, most of them unset (the hooks engine's
   * shell and file facts). The request hash (`dare.inputs.request_hash`) still binds the
   * parameters as checked.
   */
  journalDefaultsOmitted?: boolean;
  /**
   * Admitted calls one principal may have awaiting `recordResult` (default 1024). Beyond it
   * that principal's oldest is forgotten; another principal's never is.
   */
  pendingResultsPerPrincipal?: number;
  trustScore?: (principalId: PrincipalId, runId: RunId) => number | undefined;
  /**
   * Told, just before a reported result is journaled, which session event holds it (the
   * seq a later call's value provenance names): the runtime's ECT stream links it to `par`.
   */
  onResult?: (r: { decisionId: DecisionId; runId: string; resultSeq: number }) => void;
  /** Verifies capability tokens presented with calls (src/identity's CapabilityService). */
  capabilities?: CapabilityChecker;
  /** Delegated runs' ceilings: tools outside a sub-agent's grant are denied before policy. */
  ceilings?: RunCeilings;
  /** Semantic drift scoring (OATS §7.4): absent means not scored. */
  drift?: DriftTracker;
  /**
   * Screening of reported results for instructions addressed to the agent
   * (docs/gate.md#output-screening). Absent: `{ instructions: "flag" }`.
   */
  outputScreening?: OutputScreening;
  clock?: () => number;
}

/** An admitted call awaiting its resolution or its reported result. */
export interface Pending {
  prepared: Prepared;
  session: Session;
  decisionId: DecisionId;
  traceId: string;
  /** The action's ORM risk score (journaled in the HITL record). */
  riskScore: number;
}

/** What every stage of one Gate shares (internal). */
export interface GateDeps {
  readonly o: GateOptions;
  readonly sessions: SessionStore;
  readonly defer: DeferQueue;
  readonly clock: () => number;
  /** Admitted calls awaiting recordResult; bounded per principal, each principal's newest kept. */
  readonly pending: PendingResults;
  principal(id: PrincipalId): PrincipalConfig | undefined;
}

/** Default timeout of a step_up or defer whose terms name none. */
export const APPROVAL_DEFAULT_MS = 300_000;
