// Revocation floors stay bounded without forgetting: past the cap the oldest principal's
// floor is applied to everyone (over-revoking), and only entries whose grants have all
// expired on their own are dropped.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RevocationFloors } from "../../src/identity/capabilities/index.js";

describe("revocation floors", () => {
  it("voids grants issued at or before the floor, not after, and only the principal's", () => {
    const f = new RevocationFloors();
    f.revoke("a", 1000);
    expect(f.revoked("a", 999)).toBe(true);
    expect(f.revoked("a", 1000)).toBe(true);
    expect(f.revoked("a", 1001)).toBe(false);
    expect(f.revoked("b", 500)).toBe(false);
    // An earlier revocation never lowers the floor.
    f.revoke("a", 200);
    expect(f.revoked("a", 900)).toBe(true);
  });

  it("an attacker flooding revocations of other principals does not revive a revoked grant", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom("a", "b", "c", "d", "e", "f"), fc.nat(10_000)), { maxLength: 60 }),
        fc.constantFrom("a", "b", "c", "d", "e", "f"),
        fc.nat(10_000),
        (events, who, issuedAt) => {
          const bounded = new RevocationFloors({ maxEntries: 2 });
          const exact = new Map<string, number>();
          for (const [p, at] of events) {
            bounded.revoke(p, at);
            exact.set(p, Math.max(at, exact.get(p) ?? -1));
          }
          expect(bounded.size).toBeLessThanOrEqual(2);
          const floor = exact.get(who);
          if (floor !== undefined && issuedAt <= floor) expect(bounded.revoked(who, issuedAt)).toBe(true);
        },
      ),
    );
  });

  it("drops only entries older than the horizon (their grants have expired anyway)", () => {
    const f = new RevocationFloors({ horizonMs: 100 });
    f.revoke("old", 0, 0);
    f.revoke("new", 150, 150);
    expect(f.size).toBe(1);
    expect(f.revoked("new", 150)).toBe(true);
  });
});
