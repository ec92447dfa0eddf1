// APAE assurance-profile requirements ("Assurance Profiles", the profile table) for the
// profile the deployment configures, as scenarios: the ECT level its actions emit, and the
// quarantine protocol (trust driven below the floor by policy violations quarantines the
// agent; a quarantined agent's next call is refused, in a new run too), and the signed early
// lift (apae-lift.ts), and behaviour verification (apae-behavior.ts). A deployment with no
// `apae` section has no profile to check: reported, never counted as a pass.
import { ECT_LEDGER_EVENT, PROFILE_MECHANISMS } from "../trust/index.js";
import { behaviourVerification } from "./apae-behavior.js";
import { driveToQuarantine, earlyLift } from "./apae-lift.js";
import { describeOutcome, probeOf, withScenario } from "./scenario.js";
import type { Check, LibraryTarget, Observation } from "./types.js";

const SECTION = "APAE, Assurance Profiles (profile requirements table)";

const noProfile = (t: LibraryTarget): Observation | undefined =>
  t.config.apae === undefined
    ? { pass: false, observed: "", skipped: "the deployment configures no APAE profile (no apae section)" }
    : undefined;

function headerOf(token: string): { alg?: string } {
  try {
    return JSON.parse(Buffer.from(token.split(".")[0] ?? "", "base64url").toString("utf8")) as {
      alg?: string;
    };
  } catch {
    return {};
  }
}

/** Every governed action emits an ECT at the profile's level: L1 unsigned, L2 ES256, L3 also in the ledger. */
async function ectLevel(t: LibraryTarget): Promise<Observation> {
  const skip = noProfile(t);
  if (skip) return skip;
  return withScenario(t, async (s) => {
    const apae = s.rt.apae;
    if (apae === undefined)
      return { pass: false, observed: "apae is configured but the runtime has no trust engine" };
    const want = PROFILE_MECHANISMS[apae.profile].ect_level;
    const tokens: string[] = [];
    const stop = apae.ects.listen((e) => tokens.push(e.token));
    const probe = probeOf(t, s.rt);
    await s.call(probe.tool, probe.parameters);
    await apae.settled();
    stop();
    const algs = [...new Set(tokens.map((x) => headerOf(x).alg ?? "?"))];
    const ledger = (await s.entries()).filter((e) => e.type === ECT_LEDGER_EVENT).length;
    const signedOk =
      want === "L1"
        ? algs.every((a) => a === "none" || a === "ES256")
        : algs.length > 0 && algs.every((a) => a === "ES256");
    const ledgerOk = want !== "L3" || ledger >= tokens.length;
    return {
      pass: tokens.length >= 2 && signedOk && ledgerOk && apae.ects.level >= want,
      observed: `profile ${apae.profile} requires ${want}: ${tokens.length} ECTs for one call, alg ${algs.join("/") || "none emitted"}, stream level ${apae.ects.level}, ${ledger} in the ledger`,
    };
  });
}

/** Policy violations drive the agent's trust below the floor: it is quarantined and refused, whatever run it names. */
async function quarantineOnFloor(t: LibraryTarget): Promise<Observation> {
  const skip = noProfile(t);
  if (skip) return skip;
  return withScenario(t, async (s) => {
    const apae = s.rt.apae;
    if (apae === undefined)
      return { pass: false, observed: "apae is configured but the runtime has no trust engine" };
    const start = apae.viewOf(s.agent).score;
    const n = await driveToQuarantine(s, apae);
    const view = apae.viewOf(s.agent);
    const probe = probeOf(t, s.rt);
    const same = await s.authorize(probe.tool, probe.parameters);
    const fresh = await s.rt.startRun(s.agent).then(
      (r) =>
        s.rt.gate
          .authorize({ ...s.request(probe.tool, probe.parameters), runId: r.runId })
          .then(describeOutcome),
      (e: unknown) => `new run refused (${(e as { code?: string }).code ?? "error"})`,
    );
    const quarantined = view.status === "quarantined";
    return {
      pass: quarantined && same.decision === "deny" && !fresh.startsWith("allow"),
      observed: `trust ${start.toFixed(2)} → ${view.score.toFixed(2)} after ${n} violations, status ${view.status}; next call ${describeOutcome(same)}; new run: ${fresh}`,
    };
  });
}

export const APAE_CHECKS: readonly Check[] = [
  {
    spec: "apae",
    id: "APAE-ECT",
    title: "actions emit ECTs at the profile's assurance level",
    section: SECTION,
    library: ectLevel,
  },
  {
    spec: "apae",
    id: "APAE-QUARANTINE",
    title: "trust below the floor quarantines the agent (quarantine protocol)",
    section: SECTION,
    library: quarantineOnFloor,
  },
  {
    spec: "apae",
    id: "APAE-LIFT",
    title: "an early quarantine lift needs an approver's signed HITL override",
    section: "APAE, Quarantine Expiry and Recovery",
    library: earlyLift,
  },
  {
    spec: "apae",
    id: "APAE-BEHAVIOR",
    title: "behaviour verification at the profile's frequency (periodic / continuous)",
    section: SECTION,
    library: behaviourVerification,
  },
];
