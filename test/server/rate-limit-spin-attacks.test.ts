// Issue 37, floods: a principal over its rate that sends again as soon as it is answered
// spins on 429s, and every refusal costs the server (and every other principal) CPU.
// Over-rate requests whose token comes within `limits.rateLimitDelayMs` are paced — held
// until their reserved token — instead of refused; the reservations are the bucket's
// debt, so the number held per credential is bounded, and past it the request is refused
// at once. Another credential's bucket is untouched. (Clock injected: no wall-clock.)
import { describe, expect, it } from "vitest";
import type { Identity } from "../../src/server/auth.js";
import { RateLimiter } from "../../src/server/auth-plugin.js";

const hostile = { kind: "agent", id: "hostile" } as unknown as Identity;
const honest = { kind: "agent", id: "honest" } as unknown as Identity;

describe("a principal spins on rate-limit refusals", () => {
  it("is paced (held for its reserved token) up to the delay bound, refused past it; the honest credential is untouched", () => {
    let t = 0;
    const limiter = new RateLimiter(60, () => t, 3000); // one a second, up to 3 s of pacing
    for (let i = 0; i < 60; i++) expect(limiter.reserve(hostile)).toEqual({ delay: 0 });
    expect(limiter.reserve(hostile)).toEqual({ delay: 1000 });
    expect(limiter.reserve(hostile)).toEqual({ delay: 2000 });
    expect(limiter.reserve(hostile)).toEqual({ delay: 3000 });
    // Held at once: at most delayMs × rate (3); the next is refused and reserves nothing.
    expect(limiter.reserve(hostile)).toEqual({ retryAfterMs: 4000 });
    expect(limiter.reserve(hostile)).toEqual({ retryAfterMs: 4000 });
    expect(limiter.reserve(honest)).toEqual({ delay: 0 });
    t = 4000; // the three held requests have gone through; the rate is kept
    expect(limiter.reserve(hostile)).toEqual({ delay: 0 });
    expect(limiter.reserve(hostile)).toEqual({ delay: 1000 });
  });

  it("take() (no pacing) refuses at once as before", () => {
    const limiter = new RateLimiter(1, () => 0);
    expect(limiter.take(hostile)).toBe(0);
    expect(limiter.take(hostile)).toBe(60_000);
  });
});
