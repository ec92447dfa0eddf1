// The composition root: the one place that turns a RuntimeConfig into live objects —
// the policy engine, the signed journal, the trust store and the contracts it admits,
// the session store with its persisted principal state, the Gate, the executors' shared
// dependencies (journal, circuit breakers, DARE facts) and the clock. The sidecar, the
// CLI (`exec`, `run`, `gate`, the demo) and the ORGA loop all start here; so must every
// later entry point. Start-up is fail closed: anything that cannot be loaded stops it
// with a coded error and leaves nothing open; a refused contract load is journaled first.
import {
  type ContextConfig,
  createSessionStore,
  MemoryPrincipalStateStore,
  type PrincipalStateStore,
  parseContextConfig,
  type Session,
  type SessionStore,
  type StartRunOptions,
} from "../context/index.js";
import { RuntimeError, type Sha256Hash } from "../contracts/index.js";
import { type KeyPair, parsePublicKey } from "../crypto/index.js";
import {
  BreakerRegistry,
  type ExecutorDeps,
  journalBreakerTransitions,
  RateWindows,
  registerExecutorEventTypes,
} from "../executors/index.js";
import {
  type ApprovalQueue,
  type Approvals,
  DeferQueue,
  type DeferredQueue,
  Gate,
  type GatePolicy,
  InProcessApprovals,
  localApprovalQueue,
  localDeferredQueue,
  type ShadowPolicy,
} from "../gate/index.js";
import type { CapabilityService, IssuedCapability } from "../identity/capabilities/index.js";
import { ApproverKeyring, defaultEventTypes, type Journal, type JournalStore } from "../journal/index.js";
import { loadPolicyBundle } from "../policy/index.js";
import type { FleetRateLedger, PgConsoleKeys, PgIdempotencyKeys, PgNode } from "../store-pg/index.js";
import type { ContractRegistry, SharedPins, TrustStore } from "../tools/index.js";
import { AgentPinAuthenticator } from "./agentpin.js";
import { openApae, type RuntimeApae } from "./apae.js";
import { bundleRecorded } from "./bundle-record.js";
import { grantCapability, openCapabilities, type RuntimeGrant } from "./capabilities.js";
import { closeOpened, type Opened, openJournalStore, principalStore, taintStore } from "./compose-stores.js";
import type { RuntimeConfig, RuntimeDeps } from "./config.js";
import { loadContracts } from "./contracts.js";
import { type DelegatedRunRequest, DelegatedRuns, startDelegatedRun } from "./delegation.js";
import { fleetRate, sharedApprovals, sharedConsoleKeys, sharedDeferrals } from "./distributed.js";
import { evictedBody, RUN_EVICTED_EVENT, registerRuntimeEventTypes } from "./events.js";
import { composeExecutors, type RuntimeExecutors } from "./executors.js";
import { messagingFor, type RuntimeMessaging } from "./messages.js";
import { openNotifications, type RuntimeNotifications } from "./notifications.js";
import { type RuntimeQuarantines, runtimeQuarantines } from "./quarantines.js";
import { wireRevocations } from "./revocations.js";
import { startCleanRun } from "./run-taint.js";
import { openShadow } from "./shadow.js";
import { sharedRuns } from "./shared-runs.js";

export interface Runtime {
  readonly gate: Gate;
  readonly journal: Journal;
  /** SQLite, or the shared PostgreSQL chain with `config.store` (docs/distributed.md). */
  readonly store: JournalStore;
  /**
   * The chain this replica appends to when the journal has one chain per replica
   * (distributed mode's default): journal seqs are that chain's. Undefined otherwise.
   */
  readonly journalChain: string | undefined;
  readonly sessions: SessionStore;
  /** This replica's own step-up queue (its waiting calls). */
  readonly approvals: InProcessApprovals;
  /**
   * The operators' queue: this replica's requests, or in distributed mode every replica's
   * (a verdict given here resumes the call waiting on the replica that holds it).
   */
  readonly approvalQueue: ApprovalQueue;
  /**
   * The operators' deferred actions: this replica's, or in distributed mode every replica's
   * (a release given here is applied by the replica that holds the call).
   */
  readonly deferredQueue: DeferredQueue;
  readonly policy: GatePolicy;
  /** The shadow bundle and its evaluation queue, when `config.shadow` is set. */
  readonly shadow: ShadowPolicy | undefined;
  /** Notifiers and one-time approval links, when `config.notifications` is set. */
  readonly notifications: RuntimeNotifications | undefined;
  readonly signer: KeyPair;
  /** The registry the trust store admitted (undefined when no contract directory is configured). */
  readonly contracts: ContractRegistry | undefined;
  /** Manifests that were not registered (trust mode off only; enforce refuses to start). */
  readonly contractsRejected: readonly { file: string; code: string; message: string }[];
  readonly trust: TrustStore;
  readonly breakers: BreakerRegistry;
  /** What every executor of this runtime is built with. */
  readonly executorDeps: ExecutorDeps;
  /** The configured executors (built here, over `executorDeps`). */
  readonly executors: RuntimeExecutors;
  readonly clock: () => number;
  /** APAE trust (engine, policy-denial feed, quarantine tick) when `config.apae` is set. */
  readonly apae: RuntimeApae | undefined;
  /** Every active quarantine, and the approver-signed lift of a principal quarantine (issue 37). */
  readonly quarantines: RuntimeQuarantines;
  /** The communication gate, the messaging identities and the message nonce store. */
  readonly messages: RuntimeMessaging;
  /** Verifies AgentPin credentials as principals (when `identity.agentpin` is configured). */
  readonly agentpin: AgentPinAuthenticator | undefined;
  /** Distributed mode: the hook source TOFU pins every replica shares; undefined on one node. */
  readonly hookSourcePins: SharedPins | undefined;
  /** Distributed mode: /v1/execute's Idempotency-Keys, shared by every replica; undefined on one node. */
  readonly idempotency: PgIdempotencyKeys | undefined;
  /**
   * Distributed mode: the console's browser approval keys shared by every replica (public
   * halves), and a subscription to their changes on any replica; undefined on one node.
   */
  readonly sharedConsoleKeys:
    | { rows: PgConsoleKeys; listen(onChange: () => void): Promise<void>; pollMs: number | undefined }
    | undefined;
  /** Starts a run bound to an authenticated principal (loads its persisted state first). */
  startRun(principalId: string, options?: StartRunOptions): Promise<Session>;
  /**
   * An operator's clean start: a run of the principal without the taint carried at the
   * principal (a named operator only; journaled as `warden.run.clean_started`).
   */
  startCleanRun(principalId: string, operatorId: string): Promise<Session>;
  /**
   * Distributed mode: makes a named run servable by this replica before a call uses it
   * (adopts it when its owner's lease expired) or throws ERR_RUN_ELSEWHERE (details: the
   * owner node) / ERR_RUNTIME_STORE_UNAVAILABLE. A no-op without `store`.
   */
  ensureRun(runId: string, principalId: string): Promise<void>;
  /** ensureRun for operators' routes, which name a run without its principal (SharedRuns.ensureAny). */
  ensureRunAny(runId: string): Promise<void>;
  /** Verifies capability tokens (the Gate's checker); signs with the journal key. */
  readonly capabilities: CapabilityService;
  /**
   * Issues a capability token for an open run (bound to the run's principal), journaled
   * as `warden.capability.granted` before it returns. `grantedBy` names who asked (an
   * operator, a host); default "runtime". Throws ERR_CAPABILITY_GRANT_INVALID.
   */
  grant(runId: string, grant: RuntimeGrant, grantedBy?: string): Promise<IssuedCapability>;
  /**
   * Starts a sub-agent's run under a delegation chain (verified against
   * `config.delegation`); the chain's last grant is the run's ceiling. Journaled; a
   * refused chain throws its ERR_DELEGATION_* code (details: link, field).
   */
  startDelegatedRun(principalId: string, request: DelegatedRunRequest): Promise<Session>;
  /** Flushes principal state and queued journal appends, then closes every store. Idempotent. */
  close(): Promise<void>;
}

/** The configured approver keys; a key that is not an Ed25519 public key stops the start. */
function approverKeyring(
  approvers: NonNullable<RuntimeConfig["approvers"]>,
  into?: ApproverKeyring,
): ApproverKeyring {
  try {
    if (into === undefined) return ApproverKeyring.fromPem(approvers);
    for (const [id, pems] of Object.entries(approvers))
      for (const pem of pems) into.add(id, parsePublicKey(pem));
    return into;
  } catch (err) {
    throw new RuntimeError(
      "ERR_RUNTIME_CONFIG_INVALID",
      "approvers: every key must be an Ed25519 public key (PEM)",
      {
        cause: err,
      },
    );
  }
}

/** Builds a runtime. Throws coded errors for bad configuration, leaving nothing open. */
export async function composeRuntime(config: RuntimeConfig, deps: RuntimeDeps = {}): Promise<Runtime> {
  registerExecutorEventTypes(defaultEventTypes);
  registerRuntimeEventTypes(defaultEventTypes);
  const policy: GatePolicy =
    deps.policy ??
    (Array.isArray(config.policy)
      ? loadPolicyBundle(config.policy as readonly string[])
      : (config.policy as GatePolicy));
  const { store, journal, node, checkpoints } = await openJournalStore(config);
  let opened: Opened = { store, journal, node, checkpoints, principals: new MemoryPrincipalStateStore() };
  try {
    opened = { store, journal, node, checkpoints, principals: principalStore(config, deps, node) };
    opened.taint = taintStore(config, deps, node);
    return await wire(config, deps, policy, opened);
  } catch (err) {
    await closeOpened(opened);
    throw err;
  }
}

interface Sessions {
  sessions: SessionStore;
  /** Distributed mode: the rate ledger shared with the other replicas (refreshed before a call). */
  fleet: FleetRateLedger | undefined;
  /** Eviction entries still being appended (close() waits for them). */
  evictions: Set<Promise<unknown>>;
}

/**
 * The context configuration. With APAE the run's denial threshold is APAE's (denials from
 * the threshold on are policy_violation trust events; the trust quarantine governs), so
 * the context itself never quarantines on it: one quarantine state, not two.
 */
function contextConfig(config: RuntimeConfig): ContextConfig {
  const c = parseContextConfig(config.gate.context ?? {});
  if (config.apae === undefined) return c;
  return { ...c, quarantine: { ...c.quarantine, denialThreshold: Number.MAX_SAFE_INTEGER } };
}

/** The session store: persisted principal state, and every idle eviction journaled. */
async function openSessions(
  config: RuntimeConfig,
  o: Opened,
  clock: () => number,
  onGone: (runId: string) => void,
): Promise<Sessions> {
  const evictions = new Set<Promise<unknown>>();
  const context = contextConfig(config);
  const fleet = fleetRate(config, context, o.node);
  const sessions = createSessionStore(context, {
    clock,
    ...(fleet !== undefined ? { ledger: fleet } : {}),
    principalStore: o.principals,
    ...(o.taint !== undefined ? { taintStore: o.taint } : {}),
    onEvict(run) {
      onGone(run.runId);
      // The run is gone either way (eviction protects memory, not access); an entry the
      // journal refuses is not retried, and close() waits for the ones in flight.
      const p = o.journal
        .append({ type: RUN_EVICTED_EVENT, run_id: run.runId, body: evictedBody(run) })
        .catch(() => undefined);
      evictions.add(p);
      void p.finally(() => evictions.delete(p));
    },
  });
  const principals = config.gate.principals;
  // Known principals' persisted state is in force before their first call, whichever way it arrives.
  if (typeof principals !== "function")
    for (const id of Object.keys(principals)) await sessions.principals.load(id);
  return { sessions, evictions, fleet };
}

function gateFor(
  config: RuntimeConfig,
  policy: GatePolicy,
  parts: {
    journal: Journal;
    sessions: SessionStore;
    approvals: Approvals;
    capabilities: CapabilityService;
    ceilings: DelegatedRuns;
    clock: () => number;
    apae: RuntimeApae | undefined;
    shadow: ShadowPolicy | undefined;
  },
  registry: ContractRegistry | undefined,
): Gate {
  const g = config.gate;
  const contracts = g.contractLookup ? g.contractLookup(registry) : registry;
  return new Gate({
    policy,
    ...(parts.shadow !== undefined ? { shadow: parts.shadow } : {}),
    // With APAE, every decision and result also emits its ECT (grouped with the append).
    journal: parts.apae === undefined ? parts.journal : parts.apae.gateJournal(parts.journal),
    ...(parts.apae !== undefined ? { onResult: parts.apae.ects.onResult } : {}),
    signer: config.journal.signer,
    principals: g.principals,
    ...(contracts !== undefined ? { contracts } : {}),
    ...(g.classify ? { classify: g.classify } : {}),
    ...(g.requireContract !== undefined ? { requireContract: g.requireContract } : {}),
    ...(g.runs !== undefined ? { runs: g.runs } : {}),
    ...(g.bundleJournal === "change"
      ? { bundleRecorded: (hash: Sha256Hash) => bundleRecorded(parts.journal.store, hash) }
      : {}),
    ...(g.journalDefaults === "omitted" ? { journalDefaultsOmitted: true } : {}),
    sessions: parts.sessions,
    approvals: parts.approvals,
    capabilities: parts.capabilities,
    ceilings: parts.ceilings,
    ...(g.approvals
      ? { defer: new DeferQueue(g.approvals.maxDeferred, g.approvals.maxDeferredPerPrincipal) }
      : {}),
    ...(g.tenantId !== undefined ? { tenantId: g.tenantId } : {}),
    ...(g.environment !== undefined ? { environment: g.environment } : {}),
    // APAE's score of a principal, for the risk score (src/gate/risk.ts).
    ...(parts.apae !== undefined ? { trustScore: (id: string) => parts.apae?.viewOf(id).score ?? 0 } : {}),
    ...(g.drift !== undefined ? { drift: g.drift } : {}),
    ...(g.outputScreening !== undefined ? { outputScreening: g.outputScreening } : {}),
    clock: parts.clock,
  });
}

function executorDepsFor(
  config: RuntimeConfig,
  policy: GatePolicy,
  journal: Journal,
  breakers: BreakerRegistry,
  deps: RuntimeDeps,
): ExecutorDeps {
  const { snapshots, notify } = deps;
  return {
    journal,
    breakers,
    obligations: {
      windows: new RateWindows(),
      ...(deps.clock ? { now: deps.clock } : {}),
      ...(notify ? { notify } : {}),
    },
    ...(snapshots !== undefined ? { snapshots } : {}),
    ...(config.agentId !== undefined ? { agentId: config.agentId } : {}),
    dare: {
      tenantId: config.gate.tenantId ?? "default",
      environment: config.gate.environment ?? "dev",
      policyBundleHash: policy.policyBundleHash,
    },
  };
}

/** APAE trust when configured: its trust events go to the runtime's journal. */
async function apaeFor(
  config: RuntimeConfig,
  parts: {
    journal: Journal;
    sessions: SessionStore;
    clock: () => number;
    node: PgNode | undefined;
    principalStore: PrincipalStateStore;
    keyring: ApproverKeyring | undefined;
  },
  registry: ContractRegistry | undefined,
) {
  if (config.apae === undefined) return undefined;
  const { node, ...rest } = parts;
  return await openApae(config.apae, {
    ...rest,
    // Distributed mode: the shared trust tables, and every replica's writes followed.
    ...(node !== undefined ? { shared: { store: node.trust, watch: (o) => node.watchTrust(o) } } : {}),
    ...(node !== undefined ? { ectIndex: node.ects } : {}),
    registry: defaultEventTypes,
    journalPath: config.journal.path,
    ...(registry !== undefined ? { contracts: registry } : {}),
    denialThreshold: parseContextConfig(config.gate.context ?? {}).quarantine.denialThreshold,
    ...(config.approvers !== undefined ? { approvers: config.approvers } : {}),
  });
}

async function wire(
  config: RuntimeConfig,
  deps: RuntimeDeps,
  policy: GatePolicy,
  o: Opened,
): Promise<Runtime> {
  const { journal, store } = o;
  const loaded = await loadContracts(config.contracts, journal, o.node?.tofuPins.forKind("schemapin"));
  const breakers = new BreakerRegistry(config.breaker ?? {});
  const notifications = openNotifications(config.notifications, journal, deps.clock ?? Date.now);
  const notify = deps.notify ?? notifications?.obligation;
  const executorDeps = executorDepsFor(config, policy, journal, breakers, {
    ...deps,
    ...(notify !== undefined ? { notify } : {}),
  });
  const executors = composeExecutors(config.executors, executorDeps, o.node?.mcpPins);
  const clock = deps.clock ?? Date.now;
  const pinConfig = config.identity?.agentpin;
  const agentpin =
    pinConfig === undefined ? undefined : new AgentPinAuthenticator(pinConfig, journal, clock, o.node?.pins);
  // An evicted run's capability use counts are dropped (its tokens are refused anyway).
  const gone = { forget: (_runId: string): void => undefined };
  const { sessions, evictions, fleet } = await openSessions(config, o, clock, (id) => gone.forget(id));
  // The approvers' keys (configured, and the console's browser keys): signed step-up
  // verdicts and signed quarantine lifts are checked against them.
  const ring =
    config.approvers !== undefined || deps.approverKeys !== undefined
      ? approverKeyring(config.approvers ?? {}, deps.approverKeys)
      : undefined;
  const apae = await apaeFor(
    config,
    { journal, sessions, clock, node: o.node, principalStore: o.principals, keyring: ring },
    loaded.registry,
  );
  const capabilities = openCapabilities(
    sessions,
    config.journal.signer,
    clock,
    o.node?.ledger,
    o.node?.revocations,
  );
  const quarantines = runtimeQuarantines(
    { principals: sessions.principals, ring, journal, store: o.principals, clock },
    apae,
  );
  // Distributed mode: a quarantine saved by another replica is loaded into this one's cache
  // (one already in force here needs no reload: loading never lifts one).
  await o.node?.watchPrincipals((id) => {
    const held = sessions.principals.quarantineOf(id);
    if (held === undefined) void sessions.principals.load(id).catch(() => undefined);
    // One held here may have been lifted elsewhere by an approver's signed record (verified again).
    else if (held.type !== "trust_score") void quarantines.adopt(id).catch(() => undefined);
    else void apae?.adoptLift(id).catch(() => undefined);
  });
  const ceilings = new DelegatedRuns(sessions);
  // Below APAE's revocation floor: the subject's tokens and delegated chains are void.
  if (apae !== undefined)
    await wireRevocations(apae, o.store, [capabilities, ceilings], o.node?.revocations).catch(
      async (err: unknown) => {
        await apae.close();
        throw err;
      },
    );
  const runs = sharedRuns({ registry: o.node?.runs, sessions, journal, fleet, clock });
  gone.forget = (id) => {
    runs.gone(id);
    ceilings.forget(id);
    void capabilities.forgetRun(id).catch(() => undefined);
  };
  const queue = config.gate.approvals;
  const approvals = new InProcessApprovals({
    ...(queue?.maxPending !== undefined ? { maxPending: queue.maxPending } : {}),
    ...(queue?.maxPendingPerPrincipal !== undefined
      ? { maxPendingPerPrincipal: queue.maxPendingPerPrincipal }
      : {}),
    ...(ring !== undefined ? { approverKeys: ring, clock } : {}),
  });
  const shared = await sharedApprovals(o.node, approvals, clock);
  const gatePolicy = apae === undefined ? policy : apae.observe(policy);
  const shadow = await openShadow(config.shadow, journal);
  let gate: Gate;
  let messages: RuntimeMessaging;
  let sharedDefer: Awaited<ReturnType<typeof sharedDeferrals>>;
  try {
    gate = gateFor(
      config,
      gatePolicy,
      {
        journal,
        sessions,
        approvals: notifications?.wrap(shared ?? approvals) ?? shared ?? approvals,
        capabilities,
        ceilings,
        clock,
        apae,
        shadow,
      },
      loaded.registry,
    );
    if (notifications !== undefined) gate.deferQueue.watch((item) => notifications.deferred(item));
    sharedDefer = await sharedDeferrals(o.node, gate.deferQueue, clock);
    messages = messagingFor(config, {
      policy,
      journal,
      sessions,
      clock,
      sharedNonces: o.node?.nonces,
      sharedInbox: o.node?.inbox,
    });
    await messages.gate.restore();
  } catch (err) {
    await apae?.close();
    await shared?.close();
    await sharedDefer?.close();
    throw err;
  }
  const stopBreakers = journalBreakerTransitions(breakers, journal);
  let closing: Promise<void> | undefined;
  return {
    gate,
    journal,
    store,
    journalChain: o.checkpoints === undefined ? undefined : o.node?.journal.chain,
    sessions,
    approvals,
    approvalQueue: shared?.queue() ?? localApprovalQueue(approvals),
    deferredQueue: sharedDefer?.queue() ?? localDeferredQueue(gate.deferQueue),
    policy,
    shadow,
    notifications,
    signer: config.journal.signer,
    contracts: loaded.registry,
    contractsRejected: loaded.registry?.rejected ?? [],
    trust: loaded.trust,
    breakers,
    executorDeps,
    executors,
    clock,
    apae,
    quarantines,
    messages,
    agentpin,
    hookSourcePins: o.node?.tofuPins.forKind("hook-source"),
    idempotency: o.node?.idempotency,
    sharedConsoleKeys: sharedConsoleKeys(o.node),
    startRun: (principalId, options) => runs.start(principalId, options),
    startCleanRun: (principalId, operatorId) =>
      startCleanRun(journal, sessions, (id, options) => runs.start(id, options), { principalId, operatorId }),
    ensureRun: (runId, principalId) => runs.ensure(runId, principalId),
    ensureRunAny: (runId) => runs.ensureAny(runId),
    capabilities,
    grant: (runId, grant, grantedBy = "runtime") =>
      grantCapability({ service: capabilities, sessions, journal }, runId, grant, grantedBy),
    startDelegatedRun: (principalId, request) =>
      startDelegatedRun(
        { config: config.delegation, sessions, journal, runs: ceilings, clock },
        principalId,
        request,
      ),
    close() {
      closing ??= (async () => {
        stopBreakers();
        runs.stop();
        await shared?.close();
        await sharedDefer?.close();
        await executors.close();
        await apae?.close();
        // The shadow's diffs of decisions already made are journaled before the journal closes.
        await shadow?.settle();
        await notifications?.notifier.close();
        await sessions.principals.flush();
        await sessions.carry?.flush();
        await Promise.all([...evictions]);
        messages.nonces.close?.();
        messages.inbox?.close?.();
        await closeOpened(o);
      })();
      return closing;
    },
  };
}
