import type { PrincipalStateStore, QuarantineTrigger, SessionStore } from "../context/index.js";
import { isoTime, type TaskOutcome, TrustError } from "../contracts/index.js";
import type { GateJournal, GatePolicy } from "../gate/index.js";
import type { ApproverKeyring, Journal } from "../journal/index.js";
import type { PolicyInput, PolicyOutcome } from "../policy/index.js";
import type { CompiledTool } from "../tools/index.js";
import {
  type Agreement,
  type AssuranceProfile,
  type BehaviorVerifier,
  contractGaps,
  type EctIndex,
  type EctLevel,
  type EmittedAct,
  journalTrustChange,
  type registerTrustEventTypes,
  type TrustAnchor,
  type TrustChange,
  type TrustDomains,
  type TrustEngine,
  type TrustEventKind,
  type TrustView,
  viewOf,
} from "../trust/index.js";
import { type AgentPinFetchOptions, agentPinFetcher } from "./agentpin-fetch.js";
import { TrustAnchorCache } from "./apae-anchors.js";
import { DenialCharges } from "./apae-denials.js";
import {
  type Adopted,
  adoptLift,
  type EarlyLift,
  earlyLift,
  type LiftOptions,
  liftDeps,
  registerApaeLiftEventType,
} from "./apae-lift.js";
import type { ApaeEctConfig, ApaePeerConfig, ApaePeers, PeerDelivery, PeerReceipt } from "./apae-peers.js";
import { contractFacts, refuseUnmetProfile } from "./apae-profile.js";
import { actOnChange, type SharedTrust, type TableChange, TrustTable } from "./apae-table.js";
import { type ActionEct, EctStream } from "./ect-stream.js";

/** An executor's reported outcome → its trust event (APAE § Trust Scoring's table). */
const TASK_EVENTS = {
  success: "task_success",
  failure: "task_failure",
  timeout: "task_timeout",
} as const satisfies Record<TaskOutcome, TrustEventKind>;

import { openParts } from "./apae-open.js";

export interface RuntimeApaeConfig {
  /** This deployment's ECT identity and signing key (needed for peers). */
  ect?: ApaeEctConfig;
  /** Peer deployments: assertions go to them, their quarantine notices are taken. */
  peers?: ApaePeerConfig[];
  /** This deployment's trust domain (served at /.well-known/apae/trust-anchor). */
  domain?: TrustAnchor;
  /** Bilateral trust agreements: cross-domain delegation is refused without one. */
  agreements?: Agreement[];
  /** The assurance profile (default standard) and its per-workflow / per-tool overrides (stricter only). */
  profile?: AssuranceProfile;
  overrides?: { workflows?: Record<string, AssuranceProfile>; tools?: Record<string, AssuranceProfile> };
  /** Behaviour verification: operator keys (Ed25519 public key files) and signed spec files. */
  behavior?: { keys: string[]; specs: string[] };
  /** Trust settings over the spec defaults (docs/trust.md, Configuration). */
  settings?: unknown;
  /**
   * SQLite trust table file. Default `<journal>.trust.db`, memory for an in-memory journal;
   * unused in distributed mode (the shared store's trust tables).
   */
  store?: string;
  /** How often due quarantines are ended and periodic behaviour checks run (default 60 000 ms). */
  tickMs?: number;
  /** Level of the runtime's action ECTs (default: the profile's, relaxed L1 / standard L2 / regulated L3). */
  ectLevel?: EctLevel;
  /** The SSRF-guarded fetch of peer domains' trust anchors (agreements with fetch_anchor). */
  anchorFetch?: AgentPinFetchOptions;
  /** Retries of notifications to peers (attempts, first backoff, cap); a give-up is journaled. */
  delivery?: { attempts?: number; backoffMs?: number; maxBackoffMs?: number };
  /** Rate limit of the unauthenticated notify route: per source per minute, sources tracked. */
  notify?: { perMinute?: number; maxSources?: number };
}

export type CrossDomainResult =
  | { ok: true; token: string; jti: string; score: number; agreement: string }
  | { ok: false; code: string; message: string };

/** An `apae:trust_revoke` in the deployment's table: revoke the subject's delegations and tokens. */
export interface TrustRevocation {
  subject: string;
  score: number;
  threshold: number;
  reason: string;
  at: number;
}

export interface RuntimeApae {
  readonly engine: TrustEngine;
  /** The deployment's current view of `subject` (from the in-process table, no I/O). */
  viewOf(subject: string): TrustView;
  /**
   * Registers a revocation hook, called (in order, awaited) for every `apae:trust_revoke`
   * in the deployment's table after it is journaled. Returns the unsubscribe function.
   */
  onRevoke(listener: (r: TrustRevocation) => void | Promise<void>): () => void;
  /** Peer exchange when `ect` is configured. */
  readonly peers: ApaePeers | undefined;
  /** Sends our signed view of `subject` to a configured peer (recorded for the quarantine broadcast). */
  assertTo(subject: string, peer: string): Promise<PeerDelivery>;
  /** The behaviour verifier with the configured specs installed (none configured: no specs). */
  readonly behavior: BehaviorVerifier;
  /** The deployment's assurance profile. */
  readonly profile: AssuranceProfile;
  /** Cross-domain trust when `domain` is configured. */
  readonly domains: TrustDomains | undefined;
  /**
   * A cross-domain delegation by `from` to `to` in `domain`: refused without an agreement
   * (or below its assurance); else the signed `apae:cross_domain_assertion` and the
   * delegatee's score in the cross-domain table.
   */
  delegate(from: string, to: string, domain: string): Promise<CrossDomainResult>;
  /** Takes a peer's signed ECT (assertion or quarantine notice); applied in order and journaled. */
  receive(token: string): Promise<PeerReceipt>;
  /**
   * An approver's signed early lift (apae-lift.ts): ends the trust quarantine and the principal
   * quarantine it caused, journaled (`warden.apae.lift`) before it resolves; refusals are coded.
   */
  lift(record: unknown, o?: LiftOptions): Promise<EarlyLift>;
  /** Distributed mode: adopts a lift another replica saved in the shared principal state (verified here). */
  adoptLift(principalId: string): Promise<Adopted>;
  /** The policy with the trust facts (apae.peer_trust_score, confidence) added to its input. */
  observe(policy: GatePolicy): GatePolicy;
  /** The notify route's rate limit (per source address per minute, sources tracked). */
  readonly notifyLimit: { perMinute?: number; maxSources?: number };
  /** The runtime's action ECT stream (level, the Gate's onResult port, the journal wrapper). */
  readonly ects: EctStream;
  /** The journal the Gate writes through: decisions and results also emit their ECTs. */
  gateJournal(journal: GateJournal): GateJournal;
  /** Ends due quarantines now (the periodic tick calls it); resolves when journaled. */
  tick(): Promise<void>;
  /** Resolves when every trust update started so far is applied and journaled. */
  settled(): Promise<void>;
  /**
   * Resolves when the trust updates queued so far are applied, journaled and acted on (the
   * principal quarantine set, the revocation hooks run), peer broadcasts aside: the sidecar
   * waits for it before an answer leaves, so the protective state a call caused is durable
   * before its answer (issue 36).
   */
  applied(): Promise<void>;
  close(): Promise<void>;
}

export interface Parts {
  journal: Pick<Journal, "append" | "store">;
  sessions: SessionStore;
  clock: () => number;
  registry: Parameters<typeof registerTrustEventTypes>[0];
  journalPath: string;
  onError?: (err: unknown) => void;
  /** The loaded contracts (their `[apae]` sections: provenance claims, checkpoint, target). */
  contracts?: { names(): string[]; get(name: string): CompiledTool | undefined };
  /** The run's denial threshold (the context's `quarantine.denialThreshold`, default 5). */
  denialThreshold?: number;
  /** Distributed mode: the shared trust store and its change feed (src/store-pg). */
  shared?: SharedTrust | undefined;
  /** The configured approvers' public keys (PEM by approver principal): who may sign an early lift. */
  approvers?: Readonly<Record<string, readonly string[]>>;
  /** The principal state store (shared in distributed mode): where a lift's record is read back. */
  principalStore?: PrincipalStateStore;
  /**
   * The approvers' keyring (configured and console browser keys, shared by every replica in
   * distributed mode): a lift another replica saved verifies with any approver's key in it.
   */
  keyring?: ApproverKeyring | undefined;
  /** Distributed mode: the L3 ECT ledger's jti index every replica shares (src/store-pg). */
  ectIndex?: EctIndex | undefined;
}

function trigger(change: TrustChange, counters: QuarantineTrigger["counters"]): QuarantineTrigger {
  const q = change.emitted.find((e) => e.execAct === "apae:quarantine");
  return {
    type: "trust_score",
    reason: String(q?.ext["apae.reason"] ?? "trust score below the quarantine floor"),
    counters: { ...counters },
    matchedEvents: [],
    at: isoTime(change.steps[change.steps.length - 1]?.time ?? Date.now()),
  };
}

function entered(change: TrustChange, act: EmittedAct): boolean {
  return change.emitted.some(
    (e) => e.execAct === act && (act !== "apae:quarantine" || e.ext["apae.to_state"] === "quarantined"),
  );
}

function revocations(change: TrustChange): TrustRevocation[] {
  return change.emitted
    .filter((e) => e.execAct === "apae:trust_revoke")
    .map((e) => ({
      subject: change.view.subject,
      score: Number(e.ext["apae.score"]),
      threshold: Number(e.ext["apae.threshold"]),
      reason: String(e.ext["apae.reason"] ?? ""),
      at: e.time,
    }));
}

/** Opens the engine and loads the deployment's table into memory (the facts policy reads). */
export async function openApae(config: RuntimeApaeConfig, p: Parts): Promise<RuntimeApae> {
  const parts = await openParts(config, p);
  registerApaeLiftEventType(p.registry);
  const profile = config.profile ?? "standard";
  try {
    // Every entry point: a Regulated deployment whose contracts lack provenance claims or
    // checkpoints before consequential tools does not start (the rest of the profile is
    // checked by the entry point, which knows its approvers).
    refuseUnmetProfile(profile, contractGaps(profile, contractFacts(p.contracts, parts.behavior.specs())));
  } catch (err) {
    await parts.engine.store.close();
    throw err;
  }
  const live = new LiveApae(parts, p, {
    tickMs: config.tickMs ?? 60_000,
    profile,
    notifyLimit: config.notify ?? {},
    ...(config.anchorFetch !== undefined ? { anchorFetch: config.anchorFetch } : {}),
  });
  try {
    await live.start(p.shared);
  } catch (err) {
    await live.close();
    throw err;
  }
  return live;
}

class LiveApae implements RuntimeApae {
  readonly engine: TrustEngine;
  readonly peers: ApaePeers | undefined;
  /** The deployment's table, kept in memory so a decision reads its facts without I/O. */
  readonly #table: TrustTable;
  #watch: { close(): Promise<void> } | undefined;
  readonly #p: Parts;
  readonly #onError: (err: unknown) => void;
  readonly #broadcasts = new Set<Promise<unknown>>();
  readonly #revokeHooks = new Set<(r: TrustRevocation) => void | Promise<void>>();
  readonly #timer: NodeJS.Timeout;
  // Updates are applied in decision order, one after another.
  #tail: Promise<void> = Promise.resolve();

  readonly domains: TrustDomains | undefined;
  readonly behavior: BehaviorVerifier;
  readonly profile: AssuranceProfile;
  readonly ects: EctStream;
  readonly #anchors: TrustAnchorCache;
  readonly notifyLimit: { perMinute?: number; maxSources?: number };
  readonly #denials: DenialCharges;

  constructor(
    parts: Awaited<ReturnType<typeof openParts>>,
    p: Parts,
    o: {
      tickMs: number;
      profile: AssuranceProfile;
      notifyLimit: { perMinute?: number; maxSources?: number };
      anchorFetch?: AgentPinFetchOptions;
    },
  ) {
    this.profile = o.profile;
    this.notifyLimit = o.notifyLimit;
    this.#anchors = new TrustAnchorCache({
      fetch: agentPinFetcher({ maxBytes: 16 * 1024, ...o.anchorFetch }),
      clock: p.clock,
    });
    this.behavior = parts.behavior;
    this.engine = parts.engine;
    this.#table = new TrustTable(parts.engine.store, parts.engine.config.self_id, {
      onChange: (c) => this.#onTableChange(c),
      onError: (err) => this.#onError(err),
    });
    this.peers = parts.peers;
    this.domains = parts.domains;
    this.#p = p;
    this.#denials = new DenialCharges(p.denialThreshold);
    this.#onError = p.onError ?? (() => undefined);
    this.#timer = setInterval(() => void this.tick(), o.tickMs);
    this.#timer.unref();
    const s = parts.stream;
    this.ects = new EctStream({
      level: s.level,
      ...(s.key !== undefined ? { key: s.key } : {}),
      ...(s.ledger !== undefined ? { ledger: s.ledger } : {}),
      audience: this.engine.config.self_id,
      clock: p.clock,
      toolClaims: (tool) => p.contracts?.get(tool)?.contract.apae,
      onEct: (e) => this.#onAction(e),
    });
  }

  /** Loads the deployment's table; in distributed mode, follows the other replicas' writes. */
  async start(shared: SharedTrust | undefined): Promise<void> {
    await this.#table.load();
    if (shared === undefined) return;
    this.#watch = await shared.watch({
      onRow: (truster, subject) => void this.#table.reload(truster, subject).catch(this.#onError),
      onResync: () => void this.#table.resync().catch(this.#onError),
    });
  }

  /** A row that changed (another replica's write, or this one's own seen again). */
  #onTableChange(c: TableChange): Promise<void> {
    return actOnChange(c, {
      revocationFloor: this.engine.config.revocation_floor,
      principals: this.#p.sessions.principals,
      release: (subject) => this.#releaseRemote(subject),
      now: this.#p.clock,
      revoke: async (r) => {
        for (const hook of this.#revokeHooks) await Promise.resolve(hook(r)).catch(this.#onError);
      },
    });
  }

  gateJournal(journal: GateJournal): GateJournal {
    return this.ects.wrap(journal);
  }

  get #self(): string {
    return this.engine.config.self_id;
  }

  #enqueue(work: () => Promise<void>): void {
    this.#tail = this.#tail.then(work).catch(this.#onError);
  }

  viewOf(subject: string): TrustView {
    const now = this.#p.clock();
    const row = this.#table.get(subject);
    return row === undefined
      ? this.engine.freshView(subject, this.#self, now)
      : viewOf(row, now, this.engine.config);
  }

  onRevoke(listener: (r: TrustRevocation) => void | Promise<void>): () => void {
    this.#revokeHooks.add(listener);
    return () => this.#revokeHooks.delete(listener);
  }

  /** Journals a change, refreshes the cached row, broadcasts a quarantine, runs the revocation hooks. */
  async #settle(change: TrustChange): Promise<void> {
    await journalTrustChange(this.#p.journal, change);
    if (change.view.truster !== this.#self) return;
    await this.#table.reload(this.#self, change.view.subject, true);
    if (this.peers !== undefined && entered(change, "apae:quarantine")) {
      // Outside the update queue: a slow peer must not hold the next decision's update.
      const b = this.peers.broadcast(change).catch(this.#onError);
      this.#broadcasts.add(b);
      void b.finally(() => this.#broadcasts.delete(b));
    }
    for (const r of revocations(change)) {
      for (const hook of this.#revokeHooks) await Promise.resolve(hook(r)).catch(this.#onError);
    }
  }

  /** The run's counters for a quarantine trigger (zeros when the run is gone). */
  #counters(runId: string, principal: string): QuarantineTrigger["counters"] {
    try {
      return this.#p.sessions.run(runId, principal).snapshot().counters;
    } catch {
      return { proposed: 0, allowed: 0, denied: 0, deferred: 0, executed: 0, stepUps: 0, modified: 0 };
    }
  }

  /** Journals trust changes; one that quarantines the subject quarantines the principal. */
  async #settleAll(changes: readonly TrustChange[], runId: string): Promise<void> {
    for (const change of changes) {
      // The principal first (with this run's trigger): enforced before the journal is written.
      if (change.view.truster === this.#self && entered(change, "apae:quarantine")) {
        const subject = change.view.subject;
        this.#p.sessions.principals.quarantine(
          subject,
          runId,
          trigger(change, this.#counters(runId, subject)),
        );
      }
      await this.#settle(change);
    }
  }

  /** Every action ECT: denials and behaviour-spec violations become policy_violation events. */
  #onAction(e: ActionEct): void {
    if (e.phase === "outcome") {
      this.#onOutcome(e);
      return;
    }
    const charged = this.#denials.charged(e.runId, e.decision);
    const denied = e.decision?.decision === "deny";
    if (!charged && denied) return;
    this.#enqueue(async () => {
      if (charged) {
        const change = await this.engine.apply({
          subject: e.principal,
          event: "policy_violation",
          ect: e.claims.jti,
        });
        await this.#settleAll([change], e.runId);
        return;
      }
      const report = await this.behavior.observe(e.claims);
      if (report !== null) await this.#settleAll(report.changes, e.runId);
    });
  }

  /** An executed call's reported outcome: task_success / task_failure / task_timeout, naming its ECT. */
  #onOutcome(e: ActionEct): void {
    if (e.outcome === undefined) return;
    const event = TASK_EVENTS[e.outcome];
    this.#enqueue(async () => {
      const change = await this.engine.apply({ subject: e.principal, event, ect: e.claims.jti });
      await this.#settleAll([change], e.runId);
    });
  }

  observe(policy: GatePolicy): GatePolicy {
    const observed: GatePolicy = {
      policyBundleHash: policy.policyBundleHash,
      evaluate: (input: PolicyInput): PolicyOutcome => {
        // apae.peer_trust_score and its confidence, for rules with an `apae` match and Cedar.
        const v = this.viewOf(input.principal.id);
        return policy.evaluate({ ...input, trustScore: v.score, trustConfidence: v.confidence });
      },
    };
    return policy.summary === undefined ? observed : { ...observed, summary: policy.summary };
  }

  async assertTo(subject: string, peer: string): Promise<PeerDelivery> {
    if (this.peers === undefined) throw new TrustError("ERR_TRUST_CONFIG_INVALID", "no apae.ect configured");
    return this.peers.assert(this.viewOf(subject), peer);
  }

  async delegate(from: string, to: string, domain: string): Promise<CrossDomainResult> {
    if (this.domains === undefined || this.peers === undefined) {
      return { ok: false, code: "ERR_TRUST_DOMAIN_NO_AGREEMENT", message: "no trust domain configured" };
    }
    // The peer domain's anchor first, when the agreement asks for it: nothing is recorded
    // for a delegation whose domain cannot show its anchor.
    const agreement = this.domains.agreementFor(domain);
    let anchorUri: string | undefined;
    if (agreement?.fetch_anchor === true) {
      const a = await this.#anchors.anchorOf(domain, agreement.anchor_url);
      if (!a.ok) return a;
      anchorUri = a.anchor.trust_anchor_uri;
    }
    const d = await this.domains.delegate({ from, to, domain, level: "L2" });
    if (!d.ok) return d;
    const ect =
      anchorUri === undefined
        ? d.ect
        : { ...d.ect, ext: { ...d.ect.ext, "apae.dest_trust_anchor": anchorUri } };
    const { token, claims } = await this.peers.emit(ect);
    return { ok: true, token, jti: claims.jti, score: d.view.score, agreement: d.agreement.id };
  }

  /** Runs `work` after the trust updates queued so far (like a peer's notice); the result is the caller's. */
  #inOrder<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(work);
    this.#tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  lift(record: unknown, o: LiftOptions = {}): Promise<EarlyLift> {
    return this.#inOrder(() =>
      earlyLift(
        liftDeps(this.engine, this.#p, (c) => this.#settle(c)),
        record,
        o,
      ),
    );
  }

  async adoptLift(principalId: string): Promise<Adopted> {
    const r = await this.#inOrder(() =>
      adoptLift(
        liftDeps(this.engine, this.#p, (c) => this.#settle(c)),
        principalId,
      ),
    );
    if (!r.lifted) await this.#releaseExpired(principalId);
    return r;
  }

  /**
   * Another replica ended a trust quarantine without a signed lift (its expiry tick): the
   * principal held here is dropped from this replica's cache only when the shared state no
   * longer holds it and the trust table agrees (never on one read alone; a quarantine set
   * again meanwhile is loaded by the watcher, never overwritten).
   */
  async #releaseExpired(subject: string): Promise<void> {
    const principals = this.#p.sessions.principals;
    if (principals.quarantineOf(subject)?.type !== "trust_score") return;
    // The trust table must have seen this quarantine and its end (a table that never held it
    // proves nothing).
    const view = this.viewOf(subject);
    if (view.status === "quarantined" || view.quarantineCount === 0) return;
    const store = this.#p.principalStore;
    if (store === undefined) {
      await principals.lift(subject);
      return;
    }
    const rec = await store.load(subject);
    if (rec?.lift !== undefined || rec?.quarantine !== undefined) return;
    principals.forget(subject);
  }

  /** The trust row of a principal held here became active on another replica. */
  #releaseRemote(subject: string): Promise<void> {
    // Not awaited by the table: adoption waits for this replica's trust updates in order.
    void this.adoptLift(subject).catch(this.#onError);
    return Promise.resolve();
  }

  receive(token: string): Promise<PeerReceipt> {
    const peers = this.peers;
    const result = (async (): Promise<PeerReceipt> => {
      await this.#tail;
      if (peers === undefined)
        return { ok: false, code: "ERR_TRUST_CONFIG_INVALID", message: "no peers configured" };
      const r = await peers.receive(token);
      if (r.ok) await this.#settle(r.change);
      return r;
    })();
    this.#tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  async tick(): Promise<void> {
    this.#enqueue(async () => {
      for (const report of await this.behavior.check()) await this.#settleAll(report.changes, "");
      for (const change of await this.engine.tick()) {
        await this.#settle(change);
        const subject = change.view.subject;
        const principals = this.#p.sessions.principals;
        if (change.view.truster === this.#self && principals.quarantineOf(subject)?.type === "trust_score") {
          await principals.lift(subject);
        }
      }
    });
    await this.#tail;
  }

  applied(): Promise<void> {
    return this.#tail;
  }

  async settled(): Promise<void> {
    await this.#tail;
    await Promise.all([...this.#broadcasts]);
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#watch?.close();
    await this.settled();
    await this.engine.store.close();
  }
}
