// OATS E2 (agent identity verification: "domain-anchored cryptographic credentials with
// delegation chain support"), as a scenario on the deployment's delegated runs: the scenario
// makes a throwaway maker key, adds it to the deployment's delegation roots, and issues a
// chain maker → planner → the agent. A narrowed chain starts a run whose ceiling holds (the
// probe within its one-call budget is allowed, a second call, and the probe in a run whose
// grant names another tool, are denied with ERR_DELEGATION_CEILING although policy allows it); a chain whose last link widens its delegator's
// grant (more calls, more tools) and the same chain under a maker key nobody trusts never
// start a run. AgentPin credential verification has no deployment scenario here (tested in
// test/identity).
import { generateKeyPair, type KeyPair } from "../crypto/index.js";
import { type DelegatedGrantInput, type DelegationLink, issueLink } from "../identity/delegation/index.js";
import type { RuntimeConfig } from "../runtime/index.js";
import { describeOutcome, probeOf, type Scenario, withScenario } from "./scenario.js";
import type { LibraryTarget, Observation } from "./types.js";

const PLANNER = "conformance-planner";
/** A tool name the scenario's grants may name besides the probe. */
const OTHER = "conformance-other-tool";

interface Keys {
  maker: KeyPair;
  planner: KeyPair;
  agent: KeyPair;
}

function chain(s: Scenario, k: Keys, top: DelegatedGrantInput, grant: DelegatedGrantInput): DelegationLink[] {
  const l1 = issueLink({
    delegator: { id: "conformance-maker", key: k.maker },
    delegate: { id: PLANNER, publicKey: k.planner.publicKey },
    grant: top,
  });
  const l2 = issueLink({
    delegator: { id: PLANNER, key: k.planner },
    delegate: { id: s.agent, publicKey: k.agent.publicKey },
    grant,
    prev: l1,
  });
  return [l1, l2];
}

type Started = { ok: true; runId: string } | { ok: false; code: string };

const start = (s: Scenario, links: DelegationLink[]): Promise<Started> =>
  s.rt.startDelegatedRun(s.agent, { chain: links }).then(
    (r): Started => ({ ok: true, runId: r.runId }),
    (e: unknown): Started => ({ ok: false, code: String((e as { code?: unknown }).code ?? "error") }),
  );

const shown = (r: Started) => (r.ok ? "RUN STARTED" : `refused ${r.code}`);
const ceiling = (o: { decision: string; reasonCodes: readonly string[] }) =>
  o.decision === "deny" && o.reasonCodes.includes("ERR_DELEGATION_CEILING");

function withMaker(c: RuntimeConfig, maker: KeyPair): RuntimeConfig {
  const roots = [...(c.delegation?.roots ?? []), maker.publicKey];
  return { ...c, delegation: { ...c.delegation, roots } };
}

export async function delegationChains(t: LibraryTarget): Promise<Observation> {
  const k: Keys = {
    maker: generateKeyPair("ed25519"),
    planner: generateKeyPair("ed25519"),
    agent: generateKeyPair("ed25519"),
  };
  return withScenario(
    t,
    async (s) => {
      const probe = probeOf(t, s.rt);
      const expiresAt = Math.floor(Date.now() / 1000) + 600;
      const grant = (tools: string[], toolCalls: number): DelegatedGrantInput => ({
        tools,
        budgets: { toolCalls },
        dataClasses: ["public"],
        expiresAt,
      });
      const top = grant([probe.tool, OTHER], 2);
      const narrowed = await start(s, chain(s, k, top, grant([probe.tool], 1)));
      const elsewhere = await start(s, chain(s, k, top, grant([OTHER], 1)));
      if (!narrowed.ok || !elsewhere.ok)
        return {
          pass: false,
          observed: `a narrowed chain was refused: ${shown(narrowed)}, ${shown(elsewhere)}`,
        };
      const ask = (runId: string) =>
        s.rt.gate.authorize({ ...s.request(probe.tool, probe.parameters), runId });
      const first = await ask(narrowed.runId);
      const second = await ask(narrowed.runId);
      const outside = await ask(elsewhere.runId);
      const moreCalls = await start(s, chain(s, k, top, grant([probe.tool], 5)));
      const moreTools = await start(s, chain(s, k, top, grant(["*"], 1)));
      const stranger = { ...k, maker: generateKeyPair("ed25519") };
      const untrusted = await start(s, chain(s, stranger, top, grant([probe.tool], 1)));
      const pass =
        first.decision === "allow" &&
        ceiling(second) &&
        ceiling(outside) &&
        !moreCalls.ok &&
        !moreTools.ok &&
        !untrusted.ok;
      return {
        pass,
        observed:
          `narrowed chain (1 call of ${probe.tool}): first ${describeOutcome(first)}, second ${describeOutcome(second)}, ` +
          `${probe.tool} under a grant of ${OTHER} only ${describeOutcome(outside)}; widened to 5 calls: ${shown(moreCalls)}; ` +
          `widened to every tool: ${shown(moreTools)}; untrusted maker: ${shown(untrusted)}`,
      };
    },
    { config: (c) => withMaker(c, k.maker) },
  );
}
