// APAE-BEHAVIOR: a throwaway operator key signs the agent's behaviour spec; the probe outside
// it is a policy_violation naming its decision ECT, an untrusted spec change is refused, the
// operator's signed change clears the probe. A Standard deployment passes; one whose periodic
// check never runs fails; the Relaxed profile (no behaviour verification) is not counted.
import { describe, expect, it } from "vitest";
import { type LibraryTarget, runChecks } from "../../src/conformance/index.js";
import { behaviourUnchecked, exampleTarget } from "./deployment.js";

const T = 120_000;

function withApae(apae: NonNullable<LibraryTarget["config"]["apae"]>): LibraryTarget {
  const t = exampleTarget();
  return { ...t, config: { ...t.config, apae } };
}

describe("APAE-BEHAVIOR behaviour verification", () => {
  it(
    "a standard deployment checks the agent periodically against its operator-signed spec",
    async () => {
      const s = await runChecks(withApae({ profile: "standard" }), { only: ["APAE-BEHAVIOR"] });
      expect(s.results[0]?.result, s.results[0]?.observed).toBe("pass");
      expect(s.results[0]?.observed).toMatch(
        /^periodic verification; probe outside the signed spec: allow .*1 policy_violation \(1 naming its decision ECT\); spec change signed by an untrusted key → ERR_TRUST_SPEC_SIGNATURE_INVALID; probe within the operator's signed change: allow .*0 new violations$/,
      );
    },
    T,
  );

  it(
    "an agent acting outside its spec goes unnoticed when the periodic check never runs: the check fails",
    async () => {
      const s = await runChecks(
        { ...withApae({ profile: "standard" }), open: behaviourUnchecked },
        { only: ["APAE-BEHAVIOR"] },
      );
      expect(s.results[0]?.result, s.results[0]?.observed).toBe("fail");
      expect(s.results[0]?.observed).toMatch(/0 policy_violation \(0 naming its decision ECT\)/);
    },
    T,
  );

  it(
    "the relaxed profile requires no behaviour verification: not configured for it, never passed",
    async () => {
      const s = await runChecks(withApae({ profile: "relaxed" }), { only: ["APAE-BEHAVIOR"] });
      expect(s.results[0]).toMatchObject({ result: "not-configured" });
      expect(s.results[0]?.observed).toMatch(/relaxed profile requires no behaviour verification/);
    },
    T,
  );
});
