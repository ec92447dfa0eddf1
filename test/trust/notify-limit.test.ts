// The unauthenticated POST /v1/apae/notify is rate limited per source address with bounded
// memory: a flood from one source gets 429 (a stable code and Retry-After) before any
// signature is verified; a flood from many sources cannot grow the table past its bound
// nor reset the buckets of the sources already tracked.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPair, saveKeyPair } from "../../src/crypto/index.js";
import { SourceLimiter } from "../../src/server/routes/apae-limit.js";
import { type Sidecar, startTestSidecar } from "../server/harness.js";

describe("the notify rate limiter", () => {
  it("a flood from 100 000 sources keeps at most maxSources buckets and shares one overflow bucket", () => {
    let now = 0;
    const l = new SourceLimiter({ perMinute: 5, maxSources: 100, now: () => now });
    let admitted = 0;
    for (let i = 0; i < 100_000; i++) if (l.take(`10.0.${i >> 8}.${i & 255}`) === 0) admitted++;
    expect(l.size).toBe(100);
    // The first 100 sources got their burst; the rest shared one bucket of 5.
    expect(admitted).toBe(100 + 5);
    now += 1000;
    expect(l.size).toBeLessThanOrEqual(100);
  });

  it("a tracked source flooding alongside the many-source flood keeps its own (exhausted) bucket", () => {
    let now = 0;
    const l = new SourceLimiter({ perMinute: 3, maxSources: 10, now: () => now });
    for (let i = 0; i < 3; i++) expect(l.take("victim-of-own-flood")).toBe(0);
    expect(l.take("victim-of-own-flood")).toBeGreaterThan(0);
    for (let i = 0; i < 10_000; i++) l.take(`spray-${i}`);
    now += 500; // within the sweep interval and far from a refill
    expect(l.take("victim-of-own-flood")).toBeGreaterThan(0);
  });

  it("idle buckets are swept when the table fills, and a source refills at its rate", () => {
    let now = 0;
    const l = new SourceLimiter({ perMinute: 60, maxSources: 2, now: () => now });
    expect(l.take("a")).toBe(0);
    expect(l.take("b")).toBe(0);
    now += 60_000; // both refilled: swept when a third source arrives
    expect(l.take("c")).toBe(0);
    expect(l.size).toBe(1);
  });

  it("never admits more than the burst plus the refill, whatever the timing (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 2000 }), { minLength: 1, maxLength: 300 }), (gaps) => {
        let now = 0;
        const l = new SourceLimiter({ perMinute: 10, maxSources: 4, now: () => now });
        let admitted = 0;
        for (const g of gaps) {
          now += g;
          if (l.take("s") === 0) admitted++;
        }
        return admitted <= 10 + Math.floor((now * 10) / 60_000) + 1;
      }),
    );
  });
});

describe("POST /v1/apae/notify under a flood", () => {
  let s: Sidecar;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "warden-notify-"));
    const own = saveKeyPair(generateKeyPair("p256"), dir, { name: "own" });
    const peer = saveKeyPair(generateKeyPair("p256"), dir, { name: "peer" });
    s = await startTestSidecar({
      config: {
        apae: {
          ect: { issuer: "sidecar-b", key: own.privatePem },
          peers: [{ id: "sidecar-a", url: "http://127.0.0.1:9", key: peer.publicPem }],
          notify: { perMinute: 3 },
        },
      },
    });
  });
  afterAll(async () => {
    await s?.stop();
  });

  it("a source past its rate gets 429 ERR_SERVER_RATE_LIMITED with Retry-After, before verification", async () => {
    const statuses: number[] = [];
    let last: Awaited<ReturnType<Sidecar["call"]>> | undefined;
    for (let i = 0; i < 5; i++) {
      last = await s.call("/v1/apae/notify", { body: { ect: "not-a-token" } });
      statuses.push(last.status);
    }
    // The first three are verified (and refused as malformed); then the limit answers.
    expect(statuses).toEqual([400, 400, 400, 429, 429]);
    expect(last?.body.error).toMatchObject({ code: "ERR_SERVER_RATE_LIMITED" });
    expect(Number(last?.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});
