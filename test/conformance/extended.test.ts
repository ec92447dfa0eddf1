// OATS extended E2 (identity and delegation chains), E4 (sandbox tiers) and E5 (inter-agent
// message governance) as scenarios: each passes on the example deployment and fails on a
// deployment with that one guarantee taken away.
import { describe, expect, it } from "vitest";
import { type LibraryTarget, runChecks } from "../../src/conformance/index.js";
import { amnesiacMessages, exampleTarget } from "./deployment.js";

async function one(id: string, t: LibraryTarget) {
  const s = await runChecks(t, { only: [id] });
  expect(s.results).toHaveLength(1);
  return s.results[0] as NonNullable<(typeof s.results)[0]>;
}

const T = 60_000;

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
