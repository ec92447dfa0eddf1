// Capability tokens as attacks: forged, tampered, expired, over-used, presented in another
// run, by another principal, for another tool, outside their constraints, after their run
// ended; and use counting under concurrency, also over a ledger that answers with promises.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type BudgetLedger, MemoryBudgetLedger } from "../../src/context/index.js";
import { generateKeyPair } from "../../src/crypto/index.js";
import {
  type CapabilityGrant,
  CapabilityService,
  checkConstraints,
  type PresentedCall,
} from "../../src/identity/capabilities/index.js";

const T0 = 1_800_000_000_000;

function setup(opts: { ledger?: BudgetLedger; open?: Set<string> } = {}) {
  const signer = generateKeyPair("ed25519");
  const open = opts.open ?? new Set(["run-1", "run-2"]);
  let now = T0;
  const service = new CapabilityService({
    signer,
    ledger: opts.ledger ?? new MemoryBudgetLedger(),
    runOpen: (run, principal) => open.has(run) && principal === "agent-a",
    clock: () => now,
  });
  return { service, signer, open, advance: (ms: number) => (now += ms), now: () => now };
}

const GRANT: CapabilityGrant = {
  scope: { tool: "mailer" },
  constraints: { to: { pattern: "^[a-z]+@example\\.com$" }, count: { lte: 3 } },
  maxUses: 5,
  ttlMs: 60_000,
};

function call(token: string, over: Partial<PresentedCall> = {}): PresentedCall {
  return {
    token,
    runId: "run-1",
    principalId: "agent-a",
    toolClass: "http",
    action: "post",
    tool: "mailer",
    parameters: { to: "bob@example.com", count: 1 },
    now: T0,
    ...over,
  };
}

function flip(s: string, at: number): string {
  const c = s[at] === "A" ? "B" : "A";
  return s.slice(0, at) + c + s.slice(at + 1);
}

describe("capability tokens", () => {
  it("a valid token is a fact with its uses left", async () => {
    const { service } = setup();
    const cap = service.issue("run-1", "agent-a", GRANT);
    const r = await service.check(call(cap.token));
    expect(r).toEqual({ ok: true, capability: { id: cap.id, tool: "mailer", usesLeft: 4 } });
  });

  it("a forged token signed by another key is refused", async () => {
    const { service } = setup();
    const other = setup().service;
    const forged = other.issue("run-1", "agent-a", { ...GRANT, maxUses: 1000 });
    const r = await service.check(call(forged.token));
    expect(r).toMatchObject({ ok: false, code: "ERR_CAPABILITY_INVALID" });
  });

  it("an agent that edits its token's payload to raise max_uses is refused", async () => {
    const { service } = setup();
    const cap = service.issue("run-1", "agent-a", GRANT);
    const [h, p, s] = cap.token.split(".") as [string, string, string];
    const payload = JSON.parse(Buffer.from(p, "base64url").toString("utf8"));
    payload.max_uses = 1000;
    const tampered = `${h}.${Buffer.from(JSON.stringify(payload)).toString("base64url")}.${s}`;
    expect(await service.check(call(tampered))).toMatchObject({ ok: false, code: "ERR_CAPABILITY_INVALID" });
  });

  it("a token with alg none or a swapped header is refused", async () => {
    const { service } = setup();
    const cap = service.issue("run-1", "agent-a", GRANT);
    const [, p] = cap.token.split(".") as [string, string, string];
    const none = Buffer.from(JSON.stringify({ alg: "none", typ: "warden-cap+jws" })).toString("base64url");
    expect(await service.check(call(`${none}.${p}.`))).toMatchObject({ code: "ERR_CAPABILITY_INVALID" });
    expect(await service.check(call(`${none}.${p}`))).toMatchObject({ code: "ERR_CAPABILITY_INVALID" });
  });

  it("any single-character change to a token is refused (property)", async () => {
    const { service } = setup();
    const cap = service.issue("run-1", "agent-a", { ...GRANT, maxUses: 1_000_000 });
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: cap.token.length - 1 }), async (i) => {
        const bad = flip(cap.token, i);
        if (bad === cap.token) return;
        const r = await service.check(call(bad));
        // Base64url's last character may carry unused bits; those changes decode to the same bytes.
        if (r.ok)
          expect(Buffer.from(bad.split(".")[2]!, "base64url")).toEqual(
            Buffer.from(cap.token.split(".")[2]!, "base64url"),
          );
        else expect(r.code).toBe("ERR_CAPABILITY_INVALID");
      }),
      { numRuns: 200 },
    );
  });

  it("garbage of any shape is refused, never thrown (property)", async () => {
    const { service } = setup();
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 300 }), async (s) => {
        expect(await service.check(call(s))).toMatchObject({ ok: false, code: "ERR_CAPABILITY_INVALID" });
      }),
      { numRuns: 200 },
    );
  });

  it("an expired token is refused", async () => {
    const { service } = setup();
    const cap = service.issue("run-1", "agent-a", GRANT);
    const r = await service.check(call(cap.token, { now: T0 + 60_000 }));
    expect(r).toMatchObject({ ok: false, code: "ERR_CAPABILITY_EXPIRED" });
  });

  it("a token presented in another run of the same principal is refused", async () => {
    const { service } = setup();
    const cap = service.issue("run-1", "agent-a", GRANT);
    const r = await service.check(call(cap.token, { runId: "run-2" }));
    expect(r).toMatchObject({ ok: false, code: "ERR_CAPABILITY_SCOPE" });
  });

  it("a token stolen by another principal is refused", async () => {
    const { service } = setup();
    const cap = service.issue("run-1", "agent-a", GRANT);
    const r = await service.check(call(cap.token, { principalId: "agent-b" }));
    expect(r).toMatchObject({ ok: false, code: "ERR_CAPABILITY_SCOPE" });
  });

  it("a token for one tool presented for another is refused", async () => {
    const { service } = setup();
    const cap = service.issue("run-1", "agent-a", GRANT);
    const r = await service.check(
      call(cap.token, { tool: "shell-exec", toolClass: "shell", action: "exec" }),
    );
    expect(r).toMatchObject({ ok: false, code: "ERR_CAPABILITY_SCOPE" });
  });

  it("a class-scoped token covers its class and action only", async () => {
    const { service } = setup();
    const cap = service.issue("run-1", "agent-a", {
      scope: { toolClass: "http", action: "get" },
      maxUses: 3,
    });
    expect(await service.check(call(cap.token, { action: "get", tool: undefined }))).toMatchObject({
      ok: true,
    });
    expect(await service.check(call(cap.token, { action: "post" }))).toMatchObject({
      code: "ERR_CAPABILITY_SCOPE",
    });
  });

  it("parameters outside the constraints are refused, naming the parameter but not the value", async () => {
    const { service } = setup();
    const cap = service.issue("run-1", "agent-a", GRANT);
    const r = await service.check(call(cap.token, { parameters: { to: "eve@evil.test", count: 1 } }));
    expect(r).toMatchObject({ ok: false, code: "ERR_CAPABILITY_CONSTRAINT", violation: { param: "to" } });
    if (!r.ok) expect(r.message).not.toContain("evil");
    const over = await service.check(call(cap.token, { parameters: { to: "bob@example.com", count: 4 } }));
    expect(over).toMatchObject({
      code: "ERR_CAPABILITY_CONSTRAINT",
      violation: { param: "count", op: "lte" },
    });
    const missing = await service.check(call(cap.token, { parameters: { to: "bob@example.com" } }));
    expect(missing).toMatchObject({ code: "ERR_CAPABILITY_CONSTRAINT", violation: { param: "count" } });
  });

  it("a refused presentation takes no use", async () => {
    const { service } = setup();
    const cap = service.issue("run-1", "agent-a", { ...GRANT, maxUses: 1 });
    await service.check(call(cap.token, { parameters: { to: "x@evil.test", count: 1 } }));
    expect(await service.check(call(cap.token))).toMatchObject({ ok: true });
  });

  it("an over-used token is refused", async () => {
    const { service } = setup();
    const cap = service.issue("run-1", "agent-a", { ...GRANT, maxUses: 2 });
    expect((await service.check(call(cap.token))).ok).toBe(true);
    expect((await service.check(call(cap.token))).ok).toBe(true);
    expect(await service.check(call(cap.token))).toMatchObject({
      ok: false,
      code: "ERR_CAPABILITY_EXHAUSTED",
    });
  });

  it("40 concurrent presentations of a 5-use token give exactly 5", async () => {
    const { service } = setup();
    const cap = service.issue("run-1", "agent-a", GRANT);
    const rs = await Promise.all(Array.from({ length: 40 }, () => service.check(call(cap.token))));
    expect(rs.filter((r) => r.ok)).toHaveLength(5);
    expect(rs.filter((r) => !r.ok && r.code === "ERR_CAPABILITY_EXHAUSTED")).toHaveLength(35);
  });

  it("40 concurrent presentations over an asynchronous (store-shaped) ledger give exactly 5", async () => {
    const mem = new MemoryBudgetLedger();
    const later = <T>(f: () => T) => new Promise<T>((r) => setImmediate(() => r(f())));
    // Every answer arrives on a later turn, as from a database round trip; the store's own
    // reserve is atomic (one transaction for PostgreSQL), which is all the service relies on.
    const ledger: BudgetLedger = {
      reserve: (q) => later(() => mem.reserve(q)),
      commit: (r, n) => later(() => mem.commit(r, n)),
      release: (r, n) => later(() => mem.release(r, n)),
      renew: (r, n) => later(() => mem.renew(r, n)),
      usage: (id, n) => later(() => mem.usage(id, n)),
      rateUsed: (p, n) => later(() => mem.rateUsed(p, n)),
      forgetRun: (id) => later(() => mem.forgetRun(id)),
    };
    const { service } = setup({ ledger });
    const cap = service.issue("run-1", "agent-a", GRANT);
    const rs = await Promise.all(Array.from({ length: 40 }, () => service.check(call(cap.token))));
    expect(rs.filter((r) => r.ok)).toHaveLength(5);
  });

  it("a token replayed after its run ended is refused", async () => {
    const { service, open } = setup();
    const cap = service.issue("run-1", "agent-a", GRANT);
    open.delete("run-1");
    await service.forgetRun("run-1");
    expect(await service.check(call(cap.token))).toMatchObject({
      ok: false,
      code: "ERR_CAPABILITY_RUN_ENDED",
    });
  });

  it("use counts of runs that ended without eviction do not accumulate", async () => {
    const ledger = new MemoryBudgetLedger();
    const open = new Set<string>();
    const { service } = setup({ ledger, open });
    const useIn = async (run: string) => {
      open.add(run);
      const cap = service.issue(run, "agent-a", GRANT);
      expect((await service.check(call(cap.token, { runId: run }))).ok).toBe(true);
    };
    for (let i = 0; i < 300; i++) await useIn(`old-${i}`);
    open.clear(); // every one of them ended (no eviction callback)
    for (let i = 0; i < 300; i++) await useIn(`new-${i}`);
    expect(ledger.stats().runs).toBeLessThan(400);
  });

  it("granting for a run that is not open, or another principal's, is refused", () => {
    const { service } = setup();
    expect(() => service.issue("run-9", "agent-a", GRANT)).toThrow(
      expect.objectContaining({ code: "ERR_CAPABILITY_GRANT_INVALID" }),
    );
    expect(() => service.issue("run-1", "agent-b", GRANT)).toThrow(
      expect.objectContaining({ code: "ERR_CAPABILITY_GRANT_INVALID" }),
    );
  });

  it("a grant with an unsafe pattern, zero uses or a day-long ttl is refused", () => {
    const { service } = setup();
    for (const bad of [
      { ...GRANT, constraints: { to: { pattern: "(a+)+$" } } },
      { ...GRANT, maxUses: 0 },
      { ...GRANT, ttlMs: 25 * 3_600_000 },
    ])
      expect(() => service.issue("run-1", "agent-a", bad)).toThrow(
        expect.objectContaining({ code: "ERR_CAPABILITY_GRANT_INVALID" }),
      );
  });

  it("a P-256 runtime key issues ES256 tokens that verify", async () => {
    const signer = generateKeyPair("p256");
    const service = new CapabilityService({
      signer,
      ledger: new MemoryBudgetLedger(),
      runOpen: () => true,
      clock: () => T0,
    });
    const cap = service.issue("run-1", "agent-a", GRANT);
    expect(JSON.parse(Buffer.from(cap.token.split(".")[0]!, "base64url").toString()).alg).toBe("ES256");
    expect((await service.check(call(cap.token))).ok).toBe(true);
  });
});

describe("capability constraints", () => {
  it("type confusion never satisfies a constraint", () => {
    const c = { n: { lte: 10 }, s: { in: ["a", "b"] }, p: { pattern: "^x" } };
    expect(checkConstraints(c, { n: "5", s: "a", p: "xy" })).toEqual({ param: "n", op: "lte" });
    expect(checkConstraints(c, { n: 5, s: ["a"], p: "xy" })).toEqual({ param: "s", op: "in" });
    expect(checkConstraints(c, { n: 5, s: "a", p: { x: 1 } })).toEqual({ param: "p", op: "pattern" });
    expect(checkConstraints(c, { n: 5, s: "a", p: "xy" })).toBeUndefined();
  });

  it("equals compares canonical JSON, exists:false forbids the parameter", () => {
    const c = { body: { equals: { a: 1, b: [2] } }, cc: { exists: false } };
    expect(checkConstraints(c, { body: { b: [2], a: 1 } })).toBeUndefined();
    expect(checkConstraints(c, { body: { a: 1, b: [2] }, cc: "x" })).toEqual({ param: "cc", op: "exists" });
    expect(checkConstraints(c, { body: { a: 2, b: [2] } })).toEqual({ param: "body", op: "equals" });
  });

  it("a parameter named __proto__ is never read from the prototype", () => {
    expect(checkConstraints({ toString: { exists: false } }, {})).toBeUndefined();
  });
});
