// APAE-BEHAVIOR (APAE "Assurance Profiles": behaviour verification, periodic at Standard,
// continuous at Regulated), as a scenario: a throwaway operator key (Ed25519) is added to the
// deployment's behaviour-spec keys and signs a spec for the agent allowing the probe tool, at
// the profile's frequency, written to the scenario's scratch directory and loaded at start.
// That spec allows another tool only, so the probe call (allowed by policy) must become a
// policy_violation trust step naming the call's decision ECT; a spec change allowing the probe
// signed by a key the deployment does not trust must be refused; the operator's signed change
// allowing it must make the next probe call raise no violation. A periodic spec is checked by
// the runtime's tick. The Relaxed profile requires no behaviour verification.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateKeyPair, type KeyPair } from "../crypto/index.js";
import type { RuntimeConfig } from "../runtime/index.js";
import { PROFILE_MECHANISMS, signBehaviorSpec, TRUST_STEP_EVENT } from "../trust/index.js";
import { describeOutcome, probeOf, type Scenario, withScenario } from "./scenario.js";
import type { LibraryTarget, Observation } from "./types.js";

type Frequency = "periodic" | "continuous";
type Apae = NonNullable<Scenario["rt"]["apae"]>;

const OTHER_TOOL = "conformance-other-tool";

function specFor(agent: string, allowed: string[], frequency: Frequency, key: KeyPair) {
  return signBehaviorSpec(
    { spec_version: "1.0", agent_id: agent, allowed_actions: allowed, verification_frequency: frequency },
    key,
  );
}

/** The deployment with the operator's public key trusted and the agent's spec installed at start. */
function withSpec(c: RuntimeConfig, dir: string, o: { agent: string; key: KeyPair }) {
  const apae = c.apae ?? {};
  const frequency = frequencyOf(c) ?? "continuous";
  const keyFile = join(dir, "conformance-operator.pub.pem");
  writeFileSync(keyFile, o.key.publicKey.export({ format: "pem", type: "spki" }).toString());
  const specFile = join(dir, "conformance-behavior-spec.json");
  writeFileSync(specFile, JSON.stringify(specFor(o.agent, [OTHER_TOOL], frequency, o.key)), { mode: 0o600 });
  const behavior = {
    keys: [...(apae.behavior?.keys ?? []), keyFile],
    specs: [...(apae.behavior?.specs ?? []), specFile],
  };
  return { ...c, apae: { ...apae, behavior } };
}

function frequencyOf(c: RuntimeConfig): Frequency | undefined {
  const v = PROFILE_MECHANISMS[c.apae?.profile ?? "standard"].behavior_verification;
  return v === "off" ? undefined : v;
}

/** The probe call, then the check the spec's frequency calls for; its decision ECT and the violations journaled. */
async function probeChecked(t: LibraryTarget, s: Scenario, apae: Apae) {
  const jtis: string[] = [];
  const stop = apae.ects.listen((e) => {
    if (e.phase === "decision") jtis.push(e.claims.jti);
  });
  const probe = probeOf(t, s.rt);
  const outcome = await s.authorize(probe.tool, probe.parameters);
  await apae.settled();
  stop();
  await apae.tick();
  await apae.settled();
  const violations = (await s.entries())
    .filter((e) => e.type === TRUST_STEP_EVENT)
    .map((e) => e.body as { kind?: string; subject?: string; ect?: string | null })
    .filter((b) => b.kind === "policy_violation" && b.subject === s.agent);
  return { outcome: describeOutcome(outcome), ect: jtis[0], violations };
}

export async function behaviourVerification(t: LibraryTarget): Promise<Observation> {
  if (t.config.apae === undefined)
    return {
      pass: false,
      observed: "",
      skipped: "the deployment configures no APAE profile (no apae section)",
    };
  const frequency = frequencyOf(t.config);
  if (frequency === undefined)
    return { pass: false, observed: "", skipped: "the relaxed profile requires no behaviour verification" };
  const operator = generateKeyPair("ed25519");
  return withScenario(
    t,
    async (s) => {
      const apae = s.rt.apae;
      if (apae === undefined)
        return { pass: false, observed: "apae is configured but the runtime has no trust engine" };
      const first = await probeChecked(t, s, apae);
      const tool = probeOf(t, s.rt).tool;
      const stranger = await apae.behavior
        .install(specFor(s.agent, [tool], frequency, generateKeyPair("ed25519")))
        .then(
          () => "INSTALLED",
          (e: unknown) => (e as { code?: string }).code ?? "refused",
        );
      await apae.behavior.install(specFor(s.agent, [tool], frequency, operator));
      const second = await probeChecked(t, s, apae);
      const named = first.violations.filter((v) => v.ect === first.ect).length;
      const added = second.violations.length - first.violations.length;
      return {
        pass:
          first.outcome.startsWith("allow") &&
          named >= 1 &&
          stranger !== "INSTALLED" &&
          second.outcome.startsWith("allow") &&
          added === 0,
        observed: `${frequency} verification; probe outside the signed spec: ${first.outcome}, ${first.violations.length} policy_violation (${named} naming its decision ECT); spec change signed by an untrusted key → ${stranger}; probe within the operator's signed change: ${second.outcome}, ${added} new violations`,
      };
    },
    { config: (c, dir) => withSpec(c, dir, { agent: t.agent, key: operator }) },
  );
}
