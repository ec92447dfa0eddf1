// Every DARE and OATS check fails on a deliberately broken deployment (a check that cannot
// fail is worthless), and passes on the example deployment it is paired with.
import { cpSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type LibraryTarget, runChecks } from "../../src/conformance/index.js";
import { type Embedder, lexicalEmbedder } from "../../src/context/index.js";
import { generateKeyPair } from "../../src/crypto/index.js";
import { DriftTracker } from "../../src/gate/index.js";
import { composeRuntime } from "../../src/runtime/index.js";
import { loadContract, signContractFile } from "../../src/tools/index.js";
import {
  allowAll,
  cedarIgnored,
  exampleTarget,
  flakyPolicy,
  forgetful,
  generousGrants,
  journalIgnored,
  lenientGate,
  textSwayed,
  ticketless,
  unsignedApprovals,
  unsignedJournal,
} from "./deployment.js";

async function one(id: string, t: LibraryTarget) {
  const s = await runChecks(t, { only: [id] });
  expect(s.results).toHaveLength(1);
  return s.results[0] as NonNullable<(typeof s.results)[0]>;
}

async function failsOn(id: string, t: LibraryTarget): Promise<string> {
  const r = await one(id, t);
  expect(r.result, r.observed).toBe("fail");
  expect(r.observed.length).toBeGreaterThan(0);
  return r.observed;
}

const T = 60_000;

describe("DARE checks fail on broken deployments", () => {
  it(
    "DARE-1: an executor that runs without a ticket leaves no decision-linked evidence",
    async () => {
      expect(await failsOn("DARE-1", exampleTarget({ open: ticketless }))).toMatch(/evidence missing/);
    },
    T,
  );

  it(
    "DARE-1: a Gate that keeps issuing tickets after its journal is closed reaches the executor",
    async () => {
      const observed = await failsOn("DARE-1", exampleTarget({ open: journalIgnored }));
      expect(observed).toMatch(/journal closed → a ticket was issued; executor ran/);
    },
    T,
  );

  it(
    "DARE-2: an executor that accepts a copied ticket is a bypass",
    async () => {
      expect(await failsOn("DARE-2", exampleTarget({ open: ticketless }))).toMatch(/copy EXECUTED/);
    },
    T,
  );

  it(
    "DARE-3: a policy that decides differently on replay does not reproduce the run",
    async () => {
      expect(await failsOn("DARE-3", exampleTarget({ open: flakyPolicy() }))).toMatch(/diverged/);
    },
    T,
  );

  it(
    "DARE-4: a journal whose entries do not carry valid signatures does not verify",
    async () => {
      expect(await failsOn("DARE-4", exampleTarget({ open: unsignedJournal }))).toMatch(/does not verify/);
    },
    T,
  );

  it(
    "DARE-5: approvals that need no approver signature are refused by the check",
    async () => {
      expect(await failsOn("DARE-5", exampleTarget({ open: unsignedApprovals }))).toMatch(
        /unsigned verdict ACCEPTED/,
      );
    },
    T,
  );
});

describe("OATS core checks fail on broken deployments", () => {
  it(
    "C2: a Gate that repairs invalid parameters lets metacharacters through",
    async () => {
      const t = exampleTarget({ open: lenientGate({ message: "conformance" }) });
      expect(await failsOn("C2", t)).toMatch(/shell metacharacters: allow/);
    },
    T,
  );

  it(
    "C3: a policy that allows by default (and no contract required) lets an undeclared tool through",
    async () => {
      const base = exampleTarget();
      const t = { ...base, config: allowAll(mkdtempSync(join(tmpdir(), "warden-conf-allow-")), base.config) };
      expect(await failsOn("C3", t)).toMatch(/undeclared action → allow/);
    },
    T,
  );

  it(
    "C4: a policy handed a fresh session every time sees no accumulated context",
    async () => {
      expect(await failsOn("C4", exampleTarget({ open: forgetful }))).toMatch(/carries 0 prior events/);
    },
    T,
  );

  it(
    "C5: an unsigned journal fails the audit journal check",
    async () => {
      expect(await failsOn("C5", exampleTarget({ open: unsignedJournal }))).toMatch(
        /verify: signature_invalid/,
      );
    },
    T,
  );

  it(
    "C6: a Gate swayed by the model's rationale is caught",
    async () => {
      expect(await failsOn("C6", exampleTarget({ open: textSwayed }))).toMatch(
        /with injected rationale allow/,
      );
    },
    T,
  );

  it(
    "C7: an execution outside the governed executor produces no evidence envelope",
    async () => {
      expect(await failsOn("C7", exampleTarget({ open: ticketless }))).toMatch(/no evidence entry/);
    },
    T,
  );
});

describe("OATS extended checks fail on broken deployments", () => {
  it(
    "E6: a journal that hands back nothing gives the SIEM nothing",
    async () => {
      const t = exampleTarget({ open: unsignedJournal });
      // Unsigned entries still map; what must fail is a journal with no decision entries at all.
      const empty = exampleTarget({
        open: async (c, d) => {
          const rt = await (t.open as NonNullable<LibraryTarget["open"]>)(c, d);
          return new Proxy(rt, {
            get: (x, k, r) =>
              k === "store"
                ? new Proxy(x.store, {
                    get: (s, kk, rr) => (kk === "entries" ? async function* () {} : Reflect.get(s, kk, rr)),
                  })
                : Reflect.get(x, k, r),
          });
        },
      });
      expect(await failsOn("E6", empty)).toMatch(/0\/0/);
    },
    T,
  );

  it(
    "E7: a runtime that ignores Cedar policy files neither enforces nor checks them",
    async () => {
      const observed = await failsOn("E7", exampleTarget({ open: cedarIgnored }));
      expect(observed).toMatch(/Cedar forbid on echo: allow/);
      expect(observed).toMatch(/LOADED/);
    },
    T,
  );

  it(
    "E8: a grant with more uses than asked for is not least privilege",
    async () => {
      expect(await failsOn("E8", exampleTarget({ open: generousGrants }))).toMatch(/second use allow/);
    },
    T,
  );
});

describe("OATS E3 semantic distance", () => {
  const drifting = (embedder: Embedder) => {
    const t = exampleTarget();
    return {
      ...t,
      config: { ...t.config, gate: { ...t.config.gate, drift: new DriftTracker({ embedder }) } },
    };
  };

  it(
    "a deployment that scores drift: an unrelated request is farther than the action's own",
    async () => {
      const s = await runChecks(drifting(lexicalEmbedder), { only: ["E3"] });
      expect(s.results[0]?.result, s.results[0]?.observed).toBe("pass");
    },
    T,
  );

  it(
    "an embedder that maps every text to the same vector measures no distance: the check fails",
    async () => {
      const flat: Embedder = {
        id: "flat",
        embed: async (texts) => texts.map(() => new Float32Array([1, 0, 0])),
      };
      expect(await failsOn("E3", drifting(flat))).toMatch(/against an unrelated request/);
    },
    T,
  );

  it(
    "without drift scoring the check is not configured for the deployment, never passed",
    async () => {
      const s = await runChecks(exampleTarget(), { only: ["E3"] });
      expect(s.results[0]?.result).toBe("not-configured");
    },
    T,
  );
});

describe("OATS E1 contract integrity", () => {
  /** The example deployment with its contracts signed by a publisher key and trust enforced. */
  function signedTarget(): LibraryTarget {
    const t = exampleTarget();
    const dir = mkdtempSync(join(tmpdir(), "warden-conf-signed-"));
    cpSync(t.config.contracts?.dir as string, dir, { recursive: true });
    const publisher = generateKeyPair("p256");
    const file = join(dir, "echo.clad.toml");
    const loaded = loadContract(file);
    if (!loaded.ok) throw new Error(loaded.message);
    signContractFile(loaded.tool.contract, file, {
      privateKey: publisher.privateKey,
      domain: "tools.example",
    });
    const pem = publisher.publicKey.export({ format: "pem", type: "spki" }).toString();
    const contracts = { ...t.config.contracts, dir, trust: { mode: "enforce", keys: [pem] } };
    return { ...t, config: { ...t.config, contracts } };
  }

  it(
    "a deployment enforcing signed contracts refuses one changed after signing",
    async () => {
      const s = await runChecks(signedTarget(), { only: ["E1"] });
      expect(s.results[0]?.result, s.results[0]?.observed).toBe("pass");
    },
    T,
  );

  it(
    "a runtime that loads contracts unverified although trust is enforced fails the check",
    async () => {
      const open: NonNullable<LibraryTarget["open"]> = (c, d) =>
        composeRuntime(
          { ...c, ...(c.contracts ? { contracts: { ...c.contracts, trust: { mode: "off" } } } : {}) },
          d,
        );
      const observed = await failsOn("E1", { ...signedTarget(), open });
      expect(observed).toMatch(/changed after signing: started/);
    },
    T,
  );

  it(
    "a deployment that loads contracts unsigned: not configured for it, never passed",
    async () => {
      const s = await runChecks(exampleTarget(), { only: ["E1"] });
      expect(s.results[0]).toMatchObject({ result: "not-configured" });
    },
    T,
  );
});
