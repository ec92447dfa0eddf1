// OATS extended E2 (identity and delegation chains), E4 (sandbox tiers) and E5 (inter-agent
// message governance) as scenarios: each passes on the example deployment and fails on a
// deployment with that one guarantee taken away.
import { describe, expect, it } from "vitest";
import { type LibraryTarget, runChecks } from "../../src/conformance/index.js";
import { amnesiacMessages, chainIgnored, exampleTarget, sandboxIgnored } from "./deployment.js";

async function one(id: string, t: LibraryTarget) {
  const s = await runChecks(t, { only: [id] });
  expect(s.results).toHaveLength(1);
  return s.results[0] as NonNullable<(typeof s.results)[0]>;
}

const T = 60_000;

describe("OATS E2 delegation chains", () => {
  it(
    "the example deployment enforces a narrowed chain's ceiling and refuses widened and untrusted chains",
    async () => {
      const r = await one("E2", exampleTarget());
      expect(r.result, r.observed).toBe("pass");
      expect(r.observed).toMatch(
        /first allow.*second deny \[ERR_DELEGATION_CEILING.*conformance-other-tool only deny \[ERR_DELEGATION_CEILING.*5 calls: refused ERR_DELEGATION_WIDENS; widened to every tool: refused ERR_DELEGATION_WIDENS; untrusted maker: refused ERR_DELEGATION_\w+/,
      );
    },
    T,
  );

  it(
    "fails on a deployment that starts delegated runs without verifying the chain",
    async () => {
      const r = await one("E2", exampleTarget({ open: chainIgnored }));
      expect(r.result, r.observed).toBe("fail");
      expect(r.observed).toMatch(/widened to 5 calls: RUN STARTED/);
    },
    T,
  );
});

/** The example deployment with sandbox settings declared for its process executor. */
function sandboxed(sandbox: Record<string, unknown> = {}): LibraryTarget {
  const t = exampleTarget();
  const process = t.config.executors?.process;
  if (process === undefined) throw new Error("the example has no process executor");
  return {
    ...t,
    config: { ...t.config, executors: { ...t.config.executors, process: { ...process, sandbox } } },
  };
}

describe("OATS E4 sandbox tiers", () => {
  it(
    "a deployment with sandbox settings runs the probe in the namespace tier: no host /etc, no scratch dir, loopback only",
    async () => {
      const r = await one("E4", sandboxed());
      expect(r.result, r.observed).toBe("pass");
      expect(r.observed).toMatch(/hidden:\/etc\/passwd hidden:\S+ netdevs:1 pid:\d/);
    },
    T,
  );

  it(
    "fails on a runtime that ignores its sandbox settings (the tool sees the host)",
    async () => {
      const r = await one("E4", { ...sandboxed(), open: sandboxIgnored });
      expect(r.result, r.observed).toBe("fail");
      expect(r.observed).toMatch(/visible:\/etc\/passwd/);
    },
    T,
  );

  it(
    "fails where bubblewrap is missing, saying how to fix it",
    async () => {
      const r = await one("E4", sandboxed({ bwrap: "/nonexistent/bwrap" }));
      expect(r.result, r.observed).toBe("fail");
      expect(r.observed).toMatch(/ERR_EXEC_SANDBOX_UNAVAILABLE.*to fix: install bubblewrap/);
    },
    T,
  );

  it(
    "is not configured for a deployment that declares no sandbox settings (the example)",
    async () => {
      const r = await one("E4", exampleTarget());
      expect(r.result).toBe("not-configured");
      expect(r.observed).toMatch(/declares no sandbox settings/);
    },
    T,
  );
});

describe("OATS E5 inter-agent message governance", () => {
  it(
    "the example deployment delivers a governed message and refuses a replayed, forged, altered or unruled one",
    async () => {
      const r = await one("E5", exampleTarget());
      expect(r.result, r.observed).toBe("pass");
      expect(r.observed).toMatch(
        /governed delegate → DELIVERED .*encrypted.*replayed → ERR_MESSAGE_REPLAYED; another key as the sender → ERR_MESSAGE_\w+; altered ciphertext → ERR_MESSAGE_\w+; a primitive no rule allows → ERR_MESSAGE_DENIED/,
      );
    },
    T,
  );

  it(
    "fails on a deployment whose communication gate forgets nonces (a replayed message is delivered again)",
    async () => {
      const r = await one("E5", exampleTarget({ open: amnesiacMessages }));
      expect(r.result, r.observed).toBe("fail");
      expect(r.observed).toMatch(/replayed → DELIVERED/);
    },
    T,
  );
});
