// The Authenticator remembers tokens it has proven (so a steady client is not re-hashed
// on every request). The memory must never let a wrong token through, never answer for
// another credential, and never grow with the tokens an attacker sends.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Authenticator, hashToken } from "../../src/server/index.js";

const A = "token-agent-a-0123456789";
const B = "token-agent-b-0123456789";
const auth = () =>
  new Authenticator({
    principals: [
      { id: "agent-a", tokenSha256: hashToken(A) },
      { id: "agent-b", tokenSha256: hashToken(B) },
    ],
    approvers: [],
  });

describe("proven-token memory", () => {
  it("a near miss of a remembered token is still refused", () => {
    const a = auth();
    expect(a.authenticate(`Bearer ${A}`, undefined)).toMatchObject({ ok: true, identity: { id: "agent-a" } });
    for (const wrong of [A.slice(0, -1), `${A}0`, A.toUpperCase(), ` ${A}`]) {
      expect(a.authenticate(undefined, wrong)).toMatchObject({ ok: false });
    }
    expect(a.authenticate(`Bearer ${B}`, undefined)).toMatchObject({ ok: true, identity: { id: "agent-b" } });
    expect(a.authenticate(`Bearer ${A}`, undefined)).toMatchObject({ ok: true, identity: { id: "agent-a" } });
  });

  it("a flood of wrong tokens never authenticates, before or after the right ones are remembered", () => {
    const a = auth();
    fc.assert(
      fc.property(fc.stringMatching(/^[\x21-\x7e]{1,64}$/), (t) => {
        fc.pre(t !== A && t !== B);
        expect(a.authenticate(`Bearer ${t}`, undefined).ok).toBe(false);
        expect(a.authenticate(`Bearer ${A}`, undefined)).toMatchObject({
          ok: true,
          identity: { id: "agent-a" },
        });
      }),
      { numRuns: 300 },
    );
  });

  it("returns the same frozen identity from memory as from the digest comparison", () => {
    const a = auth();
    const first = a.authenticate(`Bearer ${A}`, undefined);
    const again = a.authenticate(undefined, A);
    expect(first.ok && again.ok && first.identity === again.identity).toBe(true);
  });
});
