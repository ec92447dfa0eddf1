// APAE trust in the runtime (opt-in with `RuntimeConfig.apae`): the trust engine over a
// SQLite trust store beside the journal, fed by the Gate's policy denials (a deny decided
// by a matching deny rule is a policy_violation trust event for the principal), every
// change journaled (warden.trust.step / .emitted). A trust quarantine becomes the
// principal's quarantine (src/context, persisted), so every run of the agent is held;
// when the trust quarantine expires (a periodic tick), the principal quarantine it caused
// is lifted — one a behavioural rule or an operator set is left alone.
import type { KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import type { QuarantineTrigger, SessionStore } from "../context/index.js";
import { isoTime, parseStrictJson, TrustError } from "../contracts/index.js";
import { keyIdOf, loadPublicKeyFile } from "../crypto/index.js";
import type { GatePolicy } from "../gate/index.js";
import type { Journal } from "../journal/index.js";
import { type PolicyInput, type PolicyOutcome, TRUST_THRESHOLD_REASON } from "../policy/index.js";
import {
  type Agreement,
  type AssuranceProfile,
  BehaviorVerifier,
  EctEmitter,
  type EmittedAct,
  journalTrustChange,
  MemoryTrustStore,
  parseTrustConfig,
  registerTrustEventTypes,
  SqliteTrustStore,
  type TrustAnchor,
  type TrustChange,
  TrustDomains,
  TrustEngine,
  type TrustRow,
  type TrustStore,
  type TrustView,
  viewOf,
} from "../trust/index.js";
import {
  type ApaeEctConfig,
  type ApaePeerConfig,
  ApaePeers,
  type PeerDelivery,
  type PeerReceipt,
} from "./apae-peers.js";

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
  /** SQLite trust table file. Default `<journal>.trust.db`, memory for an in-memory journal. */
  store?: string;
  /** How often due quarantines are ended (default 60 000 ms). */
  tickMs?: number;
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
  /** The policy, observed: rule denials become policy_violation events. */
  observe(policy: GatePolicy): GatePolicy;
  /** Ends due quarantines now (the periodic tick calls it); resolves when journaled. */
  tick(): Promise<void>;
  /** Resolves when every trust update started so far is applied and journaled. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

interface Parts {
  journal: Pick<Journal, "append">;
  sessions: SessionStore;
  clock: () => number;
  registry: Parameters<typeof registerTrustEventTypes>[0];
  journalPath: string;
  onError?: (err: unknown) => void;
}

function trigger(change: TrustChange, input: PolicyInput): QuarantineTrigger {
  const q = change.emitted.find((e) => e.execAct === "apae:quarantine");
  return {
    type: "trust_score",
    reason: String(q?.ext["apae.reason"] ?? "trust score below the quarantine floor"),
    counters: { ...input.session.counters },
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

/** Loads and verifies the configured behaviour specs (a bad signature stops the start). */
async function openBehavior(
  config: RuntimeApaeConfig,
  engine: TrustEngine,
  peers: ApaePeers | undefined,
): Promise<BehaviorVerifier> {
  const keys = new Map<string, KeyObject>();
  for (const file of config.behavior?.keys ?? []) {
    const key = loadPublicKeyFile(file);
    keys.set(keyIdOf(key), key);
  }
  const emitter =
    peers ?? new EctEmitter({ level: "L1", issuer: engine.config.self_id, clock: () => engine.now() });
  const verifier = new BehaviorVerifier({ engine, emitter, specKeys: keys, audience: engine.config.self_id });
  for (const file of config.behavior?.specs ?? []) {
    let doc: unknown;
    try {
      doc = parseStrictJson(readFileSync(file, "utf8"));
    } catch (err) {
      throw new TrustError("ERR_TRUST_SPEC_INVALID", `behaviour spec ${file} is not JSON`, { cause: err });
    }
    await verifier.install(doc);
  }
  return verifier;
}

/** Opens the store, loads the deployment's table and the peers; closes the store on failure. */
async function openParts(config: RuntimeApaeConfig, p: Parts) {
  registerTrustEventTypes(p.registry);
  const settings = parseTrustConfig(config.settings ?? {});
  const path = config.store ?? (p.journalPath === ":memory:" ? undefined : `${p.journalPath}.trust.db`);
  const store: TrustStore = path === undefined ? new MemoryTrustStore() : SqliteTrustStore.open(path);
  const engine = new TrustEngine({ store, config: settings, clock: p.clock });
  try {
    // The deployment's table, kept in memory so a decision reads its facts without I/O.
    const rows = new Map<string, TrustRow>();
    for (const r of await store.list(settings.self_id)) rows.set(r.subject, r);
    if (config.peers !== undefined && config.peers.length > 0 && config.ect === undefined) {
      throw new TrustError(
        "ERR_TRUST_CONFIG_INVALID",
        "apae.peers needs apae.ect (this deployment's ECT key)",
      );
    }
    const peers =
      config.ect === undefined ? undefined : new ApaePeers(engine, config.ect, config.peers ?? [], p.clock);
    if (
      config.agreements !== undefined &&
      config.agreements.length > 0 &&
      (config.domain === undefined || peers === undefined)
    ) {
      throw new TrustError("ERR_TRUST_CONFIG_INVALID", "apae.agreements need apae.domain and apae.ect");
    }
    const domains =
      config.domain === undefined
        ? undefined
        : new TrustDomains(engine, config.domain, config.agreements ?? []);
    const behavior = await openBehavior(config, engine, peers);
    return { engine, rows, peers, domains, behavior };
  } catch (err) {
    await store.close();
    throw err;
  }
}

/** Opens the engine and loads the deployment's table into memory (the facts policy reads). */
export async function openApae(config: RuntimeApaeConfig, p: Parts): Promise<RuntimeApae> {
  const parts = await openParts(config, p);
  return new LiveApae(parts, p, config.tickMs ?? 60_000, config.profile ?? "standard");
}

class LiveApae implements RuntimeApae {
  readonly engine: TrustEngine;
  readonly peers: ApaePeers | undefined;
  readonly #rows: Map<string, TrustRow>;
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

  constructor(
    parts: Awaited<ReturnType<typeof openParts>>,
    p: Parts,
    tickMs: number,
    profile: AssuranceProfile,
  ) {
    this.profile = profile;
    this.behavior = parts.behavior;
    this.engine = parts.engine;
    this.#rows = parts.rows;
    this.peers = parts.peers;
    this.domains = parts.domains;
    this.#p = p;
    this.#onError = p.onError ?? (() => undefined);
    this.#timer = setInterval(() => void this.tick(), tickMs);
    this.#timer.unref();
  }

  get #self(): string {
    return this.engine.config.self_id;
  }

  #enqueue(work: () => Promise<void>): void {
    this.#tail = this.#tail.then(work).catch(this.#onError);
  }

  viewOf(subject: string): TrustView {
    const now = this.#p.clock();
    const row = this.#rows.get(subject);
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
    const row = await this.engine.store.get(this.#self, change.view.subject);
    if (row !== undefined) this.#rows.set(row.subject, row);
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

  #onDenial(input: PolicyInput): void {
    this.#enqueue(async () => {
      const change = await this.engine.apply({
        subject: input.principal.id,
        event: "policy_violation",
        ect: null,
      });
      await this.#settle(change);
      if (entered(change, "apae:quarantine")) {
        this.#p.sessions.principals.quarantine(
          input.principal.id,
          input.request.runId,
          trigger(change, input),
        );
      }
    });
  }

  observe(policy: GatePolicy): GatePolicy {
    const observed: GatePolicy = {
      policyBundleHash: policy.policyBundleHash,
      evaluate: (input: PolicyInput): PolicyOutcome => {
        // apae.peer_trust_score and its confidence, for rules with an `apae` match and Cedar.
        const v = this.viewOf(input.principal.id);
        const out = policy.evaluate({ ...input, trustScore: v.score, trustConfidence: v.confidence });
        // A rule denial is a violation; a threshold denial is the trust check itself, not
        // something the agent did (charging it would spiral every low-trust agent down).
        if (
          out.decision === "deny" &&
          out.matchedRules.some((r) => r.decision === "deny") &&
          out.reasonCodes.some((c) => c !== TRUST_THRESHOLD_REASON)
        ) {
          this.#onDenial(input);
        }
        return out;
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
    const d = await this.domains.delegate({ from, to, domain, level: "L2" });
    if (!d.ok) return d;
    const { token, claims } = await this.peers.emit(d.ect);
    return { ok: true, token, jti: claims.jti, score: d.view.score, agreement: d.agreement.id };
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

  async settled(): Promise<void> {
    await this.#tail;
    await Promise.all([...this.#broadcasts]);
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.settled();
    await this.engine.store.close();
  }
}
