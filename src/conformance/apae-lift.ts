// APAE-LIFT (APAE §Quarantine Expiry and Recovery: "an operator MAY lift a quarantine early
// by issuing a HITL override with scope apae:quarantine_lift"), as a scenario: the scenario
// adds a throwaway approver key to the deployment's approvers, drives the agent into
// quarantine with policy violations, then presents an unsigned lift and one signed by a key
// no approver holds (each must be refused and leave the agent held), the approver's signed
// lift (the agent's next call and a new run must be served again, the lift journaled), and
// the same record replayed (refused).
import { isoTime } from "../contracts/index.js";
import { generateKeyPair } from "../crypto/index.js";
import type { Runtime } from "../runtime/index.js";
import { APAE_LIFT_EVENT } from "../runtime/index.js";
import { LIFT_SCOPE, signLift } from "../trust/index.js";
import { describeOutcome, probeOf, type Scenario, unknownTool, withScenario } from "./scenario.js";
import { withApprover } from "./setup.js";
import type { LibraryTarget, Observation } from "./types.js";

type Apae = NonNullable<Runtime["apae"]>;

/** Denied calls of undeclared tools (policy violations) until the agent is quarantined. */
export async function driveToQuarantine(s: Scenario, apae: Apae): Promise<number> {
  let n = 0;
  for (; n < 40 && apae.viewOf(s.agent).status !== "quarantined"; n++) {
    await s.authorize(unknownTool(), {});
    await apae.settled();
  }
  return n;
}

/** What the probe gets now, in the scenario's run and in a new run. */
async function served(t: LibraryTarget, s: Scenario): Promise<string> {
  const probe = probeOf(t, s.rt);
  const same = describeOutcome(await s.authorize(probe.tool, probe.parameters));
  const fresh = await s.rt.startRun(s.agent).then(
    (r) =>
      s.rt.gate
        .authorize({ ...s.request(probe.tool, probe.parameters), runId: r.runId })
        .then(describeOutcome),
    (e: unknown) => `refused (${(e as { code?: string }).code ?? "error"})`,
  );
  return `run: ${same}, new run: ${fresh}`;
}

const allowed = (seen: string) => /^run: allow.*new run: allow/.test(seen);
const held = (seen: string) => !/run: allow/.test(seen);
const codeOf = (r: Awaited<ReturnType<Apae["lift"]>>) => (r.ok ? "LIFTED" : r.code);

export async function earlyLift(t: LibraryTarget): Promise<Observation> {
  if (t.config.apae === undefined)
    return {
      pass: false,
      observed: "",
      skipped: "the deployment configures no APAE profile (no apae section)",
    };
  let approver = generateKeyPair("ed25519");
  const config = (c: LibraryTarget["config"]) => {
    const added = withApprover(c);
    approver = added.approver.key;
    return added.config;
  };
  return withScenario(
    t,
    async (s) => {
      const apae = s.rt.apae;
      if (apae === undefined)
        return { pass: false, observed: "apae is configured but the runtime has no trust engine" };
      const n = await driveToQuarantine(s, apae);
      const view = apae.viewOf(s.agent);
      if (view.status !== "quarantined")
        return { pass: false, observed: `the agent was not quarantined after ${n} violations` };
      const lift = {
        scope: LIFT_SCOPE,
        truster: apae.engine.config.self_id,
        subject: s.agent,
        quarantine_count: view.quarantineCount,
        issued_at: isoTime(Date.now() - 1000),
        reason: "conformance: APAE-LIFT",
      };
      const signed = signLift(lift, approver);
      const unsigned = codeOf(await apae.lift({ lift: signed.lift }));
      const afterUnsigned = await served(t, s);
      const stranger = codeOf(await apae.lift(signLift(lift, generateKeyPair("ed25519"))));
      const afterStranger = await served(t, s);
      const genuine = codeOf(await apae.lift(signed));
      const afterLift = await served(t, s);
      const journaled = (await s.entries()).filter((e) => e.type === APAE_LIFT_EVENT).length;
      const replay = codeOf(await apae.lift(signed));
      const pass =
        unsigned !== "LIFTED" &&
        stranger !== "LIFTED" &&
        held(afterUnsigned) &&
        held(afterStranger) &&
        genuine === "LIFTED" &&
        allowed(afterLift) &&
        journaled === 1 &&
        replay !== "LIFTED";
      return {
        pass,
        observed:
          `quarantined after ${n} violations; unsigned lift → ${unsigned} (${afterUnsigned}); ` +
          `non-approver key → ${stranger} (${afterStranger}); approver's signed lift → ${genuine} ` +
          `(${afterLift}); ${journaled} ${APAE_LIFT_EVENT} entry; replayed → ${replay}`,
      };
    },
    { config },
  );
}
