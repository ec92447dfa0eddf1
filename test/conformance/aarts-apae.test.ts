// AARTS levels run the hooks conformance driver against an engine: Warden's passes every
// level, an engine that allows everything fails each. APAE profile requirements run when the
// deployment configures a profile: a relaxed one passes, a deployment that emits ECTs below its
// profile's level or never quarantines fails; without an apae section they are not counted.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type EngineOpener, type LibraryTarget, runChecks } from "../../src/conformance/index.js";
import { generateKeyPair, saveKeyPair } from "../../src/crypto/index.js";
import type { EngineTransport } from "../../src/hooks/index.js";
import { exampleTarget, trustOnlyLift, uncheckedLift } from "./deployment.js";

/** An "engine" that answers allow to everything: no hostile event is ever blocked. */
const allowEverything: EngineOpener = async (): Promise<EngineTransport> => ({
  kind: "in-process",
  versionCheck: async () => ({ compatible: true, engine_id: "allow-everything", engine_version: "0" }),
  send: async () => ({ decision: "allow", category: "none", severity: "info", source: "allow-everything" }),
  close: async () => {},
});

const T = 120_000;

describe("AARTS levels", () => {
  it(
    "an engine that allows every hostile event fails level 1, 2 and 3",
    async () => {
      const s = await runChecks(exampleTarget(), { specs: ["aarts"], aartsEngine: allowEverything });
      expect(s.results.map((r) => [r.id, r.result])).toEqual([
        ["AARTS-L1", "fail"],
        ["AARTS-L2", "fail"],
        ["AARTS-L3", "fail"],
      ]);
      expect(s.results[0]?.observed).toMatch(/rm -rf \/ → block \[allow\]/);
      expect(s.passed).toBe(false);
    },
    T,
  );
});

function withApae(apae: NonNullable<LibraryTarget["config"]["apae"]>): LibraryTarget {
  const t = exampleTarget();
  return { ...t, config: { ...t.config, apae } };
}

describe("APAE profile requirements", () => {
  it(
    "a relaxed deployment emits L1 ECTs and quarantines an agent driven below the floor",
    async () => {
      const s = await runChecks(withApae({ profile: "relaxed" }), { only: ["APAE-ECT", "APAE-QUARANTINE"] });
      for (const r of s.results) expect(r.result, `${r.id}: ${r.observed}`).toBe("pass");
      expect(s.results[1]?.observed).toMatch(/status quarantined; next call deny/);
    },
    T,
  );

  it(
    "a standard deployment with an ECT key emits ES256-signed L2 ECTs",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "warden-conf-ect-"));
      const key = saveKeyPair(generateKeyPair("p256"), dir, { name: "ect" });
      const t = withApae({ profile: "standard", ect: { issuer: "conformance", key: key.privatePem } });
      const s = await runChecks(t, { only: ["APAE-ECT"] });
      expect(s.results[0]?.result, s.results[0]?.observed).toBe("pass");
      expect(s.results[0]?.observed).toMatch(/requires L2: \d+ ECTs for one call, alg ES256/);
    },
    T,
  );

  it(
    "a deployment whose trust never quarantines (floor 0) fails the quarantine protocol",
    async () => {
      const s = await runChecks(withApae({ profile: "relaxed", settings: { quarantine_floor: 0 } }), {
        only: ["APAE-QUARANTINE"],
      });
      expect(s.results[0]?.result, s.results[0]?.observed).toBe("fail");
    },
    T,
  );

  it(
    "a standard-profile deployment that emits unsigned L1 ECTs fails the ECT level",
    async () => {
      const s = await runChecks(withApae({ profile: "standard", ectLevel: "L1" }), { only: ["APAE-ECT"] });
      expect(s.results[0]?.result, s.results[0]?.observed).toBe("fail");
      expect(s.results[0]?.observed).toMatch(/requires L2.*alg none/);
    },
    T,
  );

  it(
    "a relaxed deployment lifts a quarantine early only on an approver's signed record (APAE-LIFT)",
    async () => {
      const s = await runChecks(withApae({ profile: "relaxed" }), { only: ["APAE-LIFT"] });
      expect(s.results[0]?.result, s.results[0]?.observed).toBe("pass");
      expect(s.results[0]?.observed).toMatch(
        /unsigned lift → ERR_TRUST_LIFT_UNSIGNED .*non-approver key → ERR_TRUST_LIFT_APPROVER_UNKNOWN .*signed lift → LIFTED \(run: allow.*new run: allow.*replayed → ERR_TRUST_NOT_QUARANTINED/,
      );
    },
    T,
  );

  it(
    "APAE-LIFT fails on a deployment whose lift ends only the trust table's quarantine (the Gate still holds the agent)",
    async () => {
      const s = await runChecks(
        { ...withApae({ profile: "relaxed" }), open: trustOnlyLift },
        { only: ["APAE-LIFT"] },
      );
      expect(s.results[0]?.result, s.results[0]?.observed).toBe("fail");
      expect(s.results[0]?.observed).toMatch(/signed lift → LIFTED \(run: deny/);
    },
    T,
  );

  it(
    "APAE-LIFT fails on a deployment that lifts on an unsigned record",
    async () => {
      const s = await runChecks(
        { ...withApae({ profile: "relaxed" }), open: uncheckedLift },
        { only: ["APAE-LIFT"] },
      );
      expect(s.results[0]?.result, s.results[0]?.observed).toBe("fail");
      expect(s.results[0]?.observed).toMatch(/unsigned lift → LIFTED/);
    },
    T,
  );

  it(
    "without an apae section the profile checks are not configured for it, never passed",
    async () => {
      const s = await runChecks(exampleTarget(), { specs: ["apae"] });
      expect(s.results.every((r) => r.result === "not-configured")).toBe(true);
      expect(s.counts.pass).toBe(0);
    },
    T,
  );
});
