// APAE trust in the runtime (opt-in with `RuntimeConfig.apae`): the trust engine over a
// SQLite trust store beside the journal, fed by the Gate's policy denials (a deny decided
// by a matching deny rule is a policy_violation trust event for the principal), every
// change journaled (warden.trust.step / .emitted). A trust quarantine becomes the
// principal's quarantine (src/context, persisted), so every run of the agent is held;
// when the trust quarantine expires (a periodic tick), the principal quarantine it caused
// is lifted — one a behavioural rule or an operator set is left alone.
import type { QuarantineTrigger, SessionStore } from "../context/index.js";
import { isoTime } from "../contracts/index.js";
import type { GatePolicy } from "../gate/index.js";
import type { Journal } from "../journal/index.js";
import type { PolicyInput, PolicyOutcome } from "../policy/index.js";
import {
  journalTrustChange,
  MemoryTrustStore,
  parseTrustConfig,
  registerTrustEventTypes,
  SqliteTrustStore,
  type TrustChange,
  TrustEngine,
  type TrustStore,
} from "../trust/index.js";

export interface RuntimeApaeConfig {
  /** Trust settings over the spec defaults (docs/trust.md, Configuration). */
  settings?: unknown;
  /** SQLite trust table file. Default `<journal>.trust.db`, memory for an in-memory journal. */
  store?: string;
  /** How often due quarantines are ended (default 60 000 ms). */
  tickMs?: number;
}

export interface RuntimeApae {
  readonly engine: TrustEngine;
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

export function openApae(config: RuntimeApaeConfig, p: Parts): RuntimeApae {
  registerTrustEventTypes(p.registry);
  const settings = parseTrustConfig(config.settings ?? {});
  const path = config.store ?? (p.journalPath === ":memory:" ? undefined : `${p.journalPath}.trust.db`);
  const store: TrustStore = path === undefined ? new MemoryTrustStore() : SqliteTrustStore.open(path);
  const engine = new TrustEngine({ store, config: settings, clock: p.clock });
  const onError = p.onError ?? (() => undefined);
  // Updates are applied in decision order, one after another.
  let tail: Promise<void> = Promise.resolve();
  const enqueue = (work: () => Promise<void>): void => {
    tail = tail.then(work).catch(onError);
  };

  const onDenial = (input: PolicyInput): void =>
    enqueue(async () => {
      const change = await engine.apply({
        subject: input.principal.id,
        event: "policy_violation",
        ect: null,
      });
      await journalTrustChange(p.journal, change);
      if (
        change.emitted.some(
          (e) => e.execAct === "apae:quarantine" && e.ext["apae.to_state"] === "quarantined",
        )
      ) {
        p.sessions.principals.quarantine(input.principal.id, input.request.runId, trigger(change, input));
      }
    });

  const tick = async (): Promise<void> => {
    const work = async () => {
      for (const change of await engine.tick()) {
        await journalTrustChange(p.journal, change);
        const subject = change.view.subject;
        if (
          change.view.truster === engine.config.self_id &&
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
    observe(policy) {
      const observed: GatePolicy = {
        policyBundleHash: policy.policyBundleHash,
        evaluate(input: PolicyInput): PolicyOutcome {
          const out = policy.evaluate(input);
          if (out.decision === "deny" && out.matchedRules.some((r) => r.decision === "deny")) onDenial(input);
          return out;
        },
      };
      return policy.summary === undefined ? observed : { ...observed, summary: policy.summary };
    },
    tick,
    settled: async () => {
      await tail;
    },
    async close() {
      clearInterval(timer);
      await tail;
      await store.close();
    },
  };
}
