// APAE trust in the runtime (opt-in with `RuntimeConfig.apae`): the trust engine over a
// SQLite trust store beside the journal, fed by the Gate's policy denials (a deny decided
// by a matching deny rule is a policy_violation trust event for the principal), every
// change journaled (warden.trust.step / .emitted). A trust quarantine becomes the
// principal's quarantine (src/context, persisted), so every run of the agent is held;
// when the trust quarantine expires (a periodic tick), the principal quarantine it caused
// is lifted — one a behavioural rule or an operator set is left alone.
import type { QuarantineTrigger, SessionStore } from "../context/index.js";
import { isoTime, TrustError } from "../contracts/index.js";
import type { GatePolicy } from "../gate/index.js";
import type { Journal } from "../journal/index.js";
import { type PolicyInput, type PolicyOutcome, TRUST_THRESHOLD_REASON } from "../policy/index.js";
import {
  type EmittedAct,
  journalTrustChange,
  MemoryTrustStore,
  parseTrustConfig,
  registerTrustEventTypes,
  SqliteTrustStore,
  type TrustChange,
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
  /** Trust settings over the spec defaults (docs/trust.md, Configuration). */
  settings?: unknown;
  /** SQLite trust table file. Default `<journal>.trust.db`, memory for an in-memory journal. */
  store?: string;
  /** How often due quarantines are ended (default 60 000 ms). */
  tickMs?: number;
}

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

/** Opens the engine and loads the deployment's table into memory (the facts policy reads). */
export async function openApae(config: RuntimeApaeConfig, p: Parts): Promise<RuntimeApae> {
  registerTrustEventTypes(p.registry);
  const settings = parseTrustConfig(config.settings ?? {});
  const path = config.store ?? (p.journalPath === ":memory:" ? undefined : `${p.journalPath}.trust.db`);
  const store: TrustStore = path === undefined ? new MemoryTrustStore() : SqliteTrustStore.open(path);
  const engine = new TrustEngine({ store, config: settings, clock: p.clock });
  const self = settings.self_id;
  // The deployment's table, kept in memory so a decision reads its facts without I/O.
  const rows = new Map<string, TrustRow>();
  try {
    for (const r of await store.list(self)) rows.set(r.subject, r);
  } catch (err) {
    await store.close();
    throw err;
  }
  const onError = p.onError ?? (() => undefined);
  let peers: ApaePeers | undefined;
  try {
    if (config.peers !== undefined && config.peers.length > 0 && config.ect === undefined) {
      throw new TrustError(
        "ERR_TRUST_CONFIG_INVALID",
        "apae.peers needs apae.ect (this deployment's ECT key)",
      );
    }
    peers =
      config.ect === undefined ? undefined : new ApaePeers(engine, config.ect, config.peers ?? [], p.clock);
  } catch (err) {
    await store.close();
    throw err;
  }
  const broadcasts = new Set<Promise<unknown>>();
  const revokeHooks = new Set<(r: TrustRevocation) => void | Promise<void>>();
  // Updates are applied in decision order, one after another.
  let tail: Promise<void> = Promise.resolve();
  const enqueue = (work: () => Promise<void>): void => {
    tail = tail.then(work).catch(onError);
  };
  const view = (subject: string): TrustView => {
    const now = p.clock();
    const row = rows.get(subject);
    return row === undefined ? engine.freshView(subject, self, now) : viewOf(row, now, settings);
  };

  /** Journals a change, refreshes the cached row and runs the revocation hooks. */
  const settle = async (change: TrustChange): Promise<void> => {
    await journalTrustChange(p.journal, change);
    if (change.view.truster !== self) return;
    const row = await store.get(self, change.view.subject);
    if (row !== undefined) rows.set(row.subject, row);
    if (peers !== undefined && entered(change, "apae:quarantine")) {
      // Outside the update queue: a slow peer must not hold the next decision's update.
      const b = peers.broadcast(change).catch(onError);
      broadcasts.add(b);
      void b.finally(() => broadcasts.delete(b));
    }
    for (const r of revocations(change)) {
      for (const hook of revokeHooks) await Promise.resolve(hook(r)).catch(onError);
    }
  };

  const onDenial = (input: PolicyInput): void =>
    enqueue(async () => {
      const change = await engine.apply({
        subject: input.principal.id,
        event: "policy_violation",
        ect: null,
      });
      await settle(change);
      if (entered(change, "apae:quarantine")) {
        p.sessions.principals.quarantine(input.principal.id, input.request.runId, trigger(change, input));
      }
    });

  const tick = async (): Promise<void> => {
    const work = async () => {
      for (const change of await engine.tick()) {
        await settle(change);
        const subject = change.view.subject;
        if (
          change.view.truster === self &&
          p.sessions.principals.quarantineOf(subject)?.type === "trust_score"
        ) {
          await p.sessions.principals.lift(subject);
        }
      }
    };
    enqueue(work);
    await tail;
  };
  const timer = setInterval(() => void tick(), config.tickMs ?? 60_000);
  timer.unref();

  return {
    engine,
    viewOf: view,
    onRevoke(listener) {
      revokeHooks.add(listener);
      return () => revokeHooks.delete(listener);
    },
    observe(policy) {
      const observed: GatePolicy = {
        policyBundleHash: policy.policyBundleHash,
        evaluate(input: PolicyInput): PolicyOutcome {
          // apae.peer_trust_score and its confidence, for rules with an `apae` match and Cedar.
          const v = view(input.principal.id);
          const out = policy.evaluate({ ...input, trustScore: v.score, trustConfidence: v.confidence });
          // A rule denial is a violation; a threshold denial is the trust check itself, not
          // something the agent did (charging it would spiral every low-trust agent down).
          if (
            out.decision === "deny" &&
            out.matchedRules.some((r) => r.decision === "deny") &&
            out.reasonCodes.some((c) => c !== TRUST_THRESHOLD_REASON)
          ) {
            onDenial(input);
          }
          return out;
        },
      };
      return policy.summary === undefined ? observed : { ...observed, summary: policy.summary };
    },
    peers,
    async assertTo(subject, peer) {
      if (peers === undefined) throw new TrustError("ERR_TRUST_CONFIG_INVALID", "no apae.ect configured");
      return peers.assert(view(subject), peer);
    },
    receive(token) {
      const result = (async () => {
        await tail;
        if (peers === undefined) {
          return { ok: false, code: "ERR_TRUST_CONFIG_INVALID", message: "no peers configured" } as const;
        }
        const r = await peers.receive(token);
        if (r.ok) await settle(r.change);
        return r;
      })();
      tail = result.then(
        () => undefined,
        () => undefined,
      );
      return result;
    },
    tick,
    settled: async () => {
      await tail;
      await Promise.all([...broadcasts]);
    },
    async close() {
      clearInterval(timer);
      await tail;
      await Promise.all([...broadcasts]);
      await store.close();
    },
  };
}
