// Issue 37, floods on the sidecar: one principal floods POST /v1/decide (many requests at
// once, over several runs) while another works one call at a time. The decision work
// (Gate evaluation, durable journal commit) is served through a per-principal fair queue,
// so the flood waits behind its own backlog and, past its share of the queue, is refused
// with a coded 429 before the Gate sees it; the honest principal is never refused and its
// call is decided before the flood's queued one (order of service, no clock).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { echo, type Sidecar, startTestSidecar, TOKENS, until } from "./harness.js";

let s: Sidecar;
beforeAll(async () => {
  s = await startTestSidecar({
    config: {
      limits: { rateLimitPerMinute: 100_000, maxConcurrent: 1, maxInFlightPerPrincipal: 2, maxQueued: 8 },
    },
  });
});
afterAll(() => s.stop());

const code = (r: { body: Record<string, unknown> }) => (r.body.error as { code?: string } | undefined)?.code;

/** Calls waiting their turn in the sidecar's fair decision queue (from /metrics). */
async function waiting(): Promise<number> {
  const r = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${TOKENS.approver}` } });
  const m = /^warden_decide_queue_waiting (\d+)$/m.exec(await r.text());
  return Number(m?.[1] ?? -1);
}

/** Holds the journal's appends (so a decision stays in service) until released. */
function holdJournal(on: Sidecar): () => void {
  const j = on.server.runtime.journal as unknown as { appendBuilt: (...a: unknown[]) => Promise<unknown> };
  const real = j.appendBuilt.bind(j);
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  j.appendBuilt = async (...a: unknown[]) => {
    await held;
    return real(...a);
  };
  return () => {
    j.appendBuilt = real;
    release();
  };
}

describe("one principal floods /v1/decide", () => {
  it("the flood past its share is refused 429 ERR_SERVER_BUSY before the Gate; the honest call is decided before the flood's queued one", async () => {
    const hostileRuns = await Promise.all([s.run("h1", TOKENS.agentB), s.run("h2", TOKENS.agentB)]);
    const honestRun = await s.run("honest", TOKENS.agentA);
    const order: string[] = [];
    const release = holdJournal(s);
    let answered = 0;
    const flood = Array.from({ length: 60 }, (_, i) =>
      s
        .call("/v1/decide", { token: TOKENS.agentB, body: echo(`flood ${i}`, { runId: hostileRuns[i % 2] }) })
        .then((r) => {
          answered++;
          if (r.status === 200) order.push("hostile");
          return r;
        }),
    );
    // One hostile call is in service (its journal commit held), one waits its turn, the rest are refused.
    await until(() => (answered === 58 ? true : undefined), 20_000);
    const honest = s
      .call("/v1/decide", { token: TOKENS.agentA, body: echo("hi", { runId: honestRun }) })
      .then((r) => {
        order.push("honest");
        return r;
      });
    // Both waiting calls (the flood's second, the honest one) are queued before the release.
    await until(async () => ((await waiting()) === 2 ? true : undefined), 20_000);
    release();
    const hostile = await Promise.all(flood);
    const h = await honest;

    expect([h.status, h.body.decision]).toEqual([200, "allow"]);
    expect(order).toEqual(["hostile", "honest", "hostile"]); // served in turn, not after the backlog
    const refused = hostile.filter((r) => r.status === 429);
    expect(refused).toHaveLength(58);
    for (const r of refused) {
      expect(code(r)).toBe("ERR_SERVER_BUSY");
      expect(r.headers.get("retry-after")).toBe("1");
    }
    // The harm did not happen: refused calls never reached the Gate (the runs saw two proposals).
    const proposed = hostileRuns.map(
      (id) => s.server.runtime.gate.sessions.get(id)?.snapshot().counters.proposed,
    );
    expect((proposed[0] ?? 0) + (proposed[1] ?? 0)).toBe(2);
    expect(await waiting()).toBe(0);
  });

  it("the honest principal sending one call at a time beside the flood is never refused", async () => {
    const hostileRun = await s.run("h3", TOKENS.agentB);
    const honestRun = await s.run("honest", TOKENS.agentA);
    const flood = Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        s.call("/v1/decide", { token: TOKENS.agentB, body: echo(`flood ${i}`, { runId: hostileRun }) }),
      ),
    );
    const honest: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await s.call("/v1/decide", {
        token: TOKENS.agentA,
        body: echo(`hi ${i}`, { runId: honestRun }),
      });
      honest.push(r.status);
    }
    await flood;
    expect(honest).toEqual([200, 200, 200, 200, 200]);
  });
});

describe("one principal parks /v1/execute calls on approval waits", () => {
  it("a call waiting for a human gives its fair-queue slot back: the other principal is answered while the approvals are still pending", async () => {
    const p = await startTestSidecar({
      config: { limits: { maxConcurrent: 1, maxInFlightPerPrincipal: 4 } },
    });
    try {
      const hostileRun = await p.run("parked", TOKENS.agentB);
      const honestRun = await p.run("honest", TOKENS.agentA);
      // `publish` needs an approver (20 s step-up); nobody approves.
      const parked = Array.from({ length: 2 }, (_, i) =>
        p.call("/v1/execute", {
          token: TOKENS.agentB,
          body: { runId: hostileRun, tool: "publish", parameters: { text: `parked ${i}` } },
        }),
      );
      await until(() => (p.server.runtime.approvals.pending().length > 0 ? true : undefined), 20_000);
      const r = await p.call("/v1/decide", { token: TOKENS.agentA, body: echo("hi", { runId: honestRun }) });
      expect([r.status, r.body.decision]).toEqual([200, "allow"]);
      // Answered while the parked calls still wait for their approver (not after their 20 s).
      expect(p.server.runtime.approvals.pending().length).toBeGreaterThan(0);
      let settled = 0;
      for (const c of parked) void c.then(() => settled++);
      await until(async () => {
        for (const a of p.server.runtime.approvals.pending())
          await p.call(`/v1/approvals/${a.id}`, {
            token: TOKENS.approver,
            body: { outcome: "deny", justification: "nobody approves a flood" },
          });
        return settled === parked.length ? true : undefined;
      }, 30_000);
      await Promise.all(parked);
      expect(p.service.hits).toHaveLength(0);
    } finally {
      await p.stop();
    }
  }, 60_000);
});
