import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BreakerRegistry,
  type BreakerRegistry as BreakerRegistryType,
  type BreakerTransition,
  CircuitBreaker,
  type FileBinding,
  FileExecutor,
  journalBreakerTransitions,
  type ProcessBinding,
  ProcessExecutor,
  uuidFor,
} from "../../src/executors/index.js";
import { MemoryJournal, mint } from "./helpers.js";

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "warden-rt-"));
  writeFileSync(join(root, "a.txt"), "hello");
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const read: FileBinding = { name: "files", version: "1", build: () => ({ op: "read", path: "a.txt" }) };

describe("execution tickets", () => {
  it("runs with a Gate-minted ticket exactly once", async () => {
    const journal = new MemoryJournal();
    const ex = new FileExecutor({ root }, { journal });
    const t = mint("files", {}, { toolClass: "file" });
    expect((await ex.execute(t, read)).ok).toBe(true);
    const again = await ex.execute(t, read);
    expect(!again.ok && again.code).toBe("ERR_TICKET_REUSED");
    expect(again.ok || again.evidence).toBeUndefined();
    expect(journal.ofType("warden.executor.ticket_rejected")[0]?.body).toEqual({
      executor: "file",
      tool: "files",
      code: "ERR_TICKET_REUSED",
    });
  });

  it.each([
    ["a plain object", (t: object) => ({ ...t })],
    ["a JSON round trip", (t: object) => JSON.parse(JSON.stringify(t))],
    [
      "an object built on the prototype",
      (t: object) => Object.assign(Object.create(Object.getPrototypeOf(t)), t),
    ],
    ["a structured clone", (t: object) => structuredClone({ ...t })],
    ["undefined", () => undefined],
    ["a string", () => "ticket"],
  ])("refuses a forged ticket: %s", async (_label, forge) => {
    const ex = new FileExecutor({ root });
    const r = await ex.execute(forge(mint("files", {}, { toolClass: "file" })), read);
    expect(!r.ok && r.code).toBe("ERR_TICKET_FORGED");
  });

  it("refuses a ticket for another tool", async () => {
    const r = await new FileExecutor({ root }).execute(mint("other-tool", {}, { toolClass: "file" }), read);
    expect(!r.ok && r.code).toBe("ERR_TICKET_WRONG_TOOL");
  });

  it("refuses an expired ticket", async () => {
    const t = mint("files", {}, { toolClass: "file", ttlMs: -1 });
    const r = await new FileExecutor({ root }).execute(t, read);
    expect(!r.ok && r.code).toBe("ERR_TICKET_EXPIRED");
  });

  it("cannot have its parameters altered: they are frozen, and the executor builds from them", async () => {
    const t = mint("files", { path: "a.txt" }, { toolClass: "file" });
    expect(() => {
      (t.parameters as Record<string, unknown>).path = "../../etc/passwd";
    }).toThrow(TypeError);
    const seen: unknown[] = [];
    const r = await new FileExecutor({ root }).execute(t, {
      name: "files",
      version: "1",
      build: (p) => {
        seen.push(p);
        return { op: "read", path: String(p.path) };
      },
    });
    expect(r.ok).toBe(true);
    expect(seen).toEqual([{ path: "a.txt" }]);
  });

  it("refuses parameters the binding cannot build from, before invoking anything, as evidence", async () => {
    const journal = new MemoryJournal();
    const r = await new FileExecutor({ root }, { journal }).execute(
      mint("files", {}, { toolClass: "file" }),
      {
        name: "files",
        version: "1",
        build: () => {
          throw new Error("path is required");
        },
      },
    );
    expect(!r.ok && r.code).toBe("ERR_EXEC_PARAMS_INVALID");
    expect(!r.ok && r.message).toBe("path is required");
    expect(r.ok || r.evidence?.invocation).toBeNull();
    expect(r.ok || r.evidence?.status).toBe("rejected");
    expect(journal.ofType("warden.executor.evidence")).toHaveLength(1);
  });

  it("maps non-UUID run and decision ids to stable UUIDs for the DARE record", () => {
    expect(uuidFor("run-test-1")).toBe(uuidFor("run-test-1"));
    expect(uuidFor("run-test-1")).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    const u = "0190a6d2-3f1e-7abc-8def-0123456789ab";
    expect(uuidFor(u)).toBe(u);
  });
});

describe("circuit breaker", () => {
  function clock() {
    let now = 1_000_000;
    return { now: () => now, advance: (ms: number) => (now += ms) };
  }

  it("opens after N consecutive failures, rejects while open, half-opens after the cool-down", () => {
    const c = clock();
    const transitions: BreakerTransition[] = [];
    const b = new CircuitBreaker("t", { failureThreshold: 3, coolDownMs: 1000, now: c.now }, (t) =>
      transitions.push(t),
    );
    for (let i = 0; i < 2; i++) {
      const a = b.admit();
      if (!a.ok) throw new Error("closed breaker refused");
      a.permit.failure();
    }
    const s = b.admit();
    if (!s.ok) throw new Error("refused");
    s.permit.success(); // resets the consecutive count
    for (let i = 0; i < 3; i++) {
      const a = b.admit();
      if (!a.ok) throw new Error("refused early");
      a.permit.failure();
    }
    expect(b.state).toBe("open");
    const refused = b.admit();
    expect(refused).toEqual({ ok: false, state: "open", retryAfterMs: 1000 });
    c.advance(999);
    expect(b.admit().ok).toBe(false);
    c.advance(1);
    expect(b.state).toBe("half_open");
    expect(transitions.map((t) => `${t.from}->${t.to}`)).toEqual(["closed->open", "open->half_open"]);
  });

  it("admits a bounded number of trials; a trial failure reopens, enough successes close", () => {
    const c = clock();
    const b = new CircuitBreaker("t", {
      failureThreshold: 1,
      coolDownMs: 10,
      halfOpenMaxCalls: 2,
      halfOpenSuccesses: 2,
      now: c.now,
    });
    const first = b.admit();
    if (!first.ok) throw new Error("refused");
    first.permit.failure();
    c.advance(10);
    const t1 = b.admit();
    const t2 = b.admit();
    const t3 = b.admit();
    expect([t1.ok, t2.ok, t3.ok]).toEqual([true, true, false]);
    if (!t1.ok || !t2.ok) throw new Error("refused");
    t1.permit.success();
    expect(b.state).toBe("half_open");
    t2.permit.success();
    expect(b.state).toBe("closed");
    // Reopen, then fail a trial.
    const f = b.admit();
    if (!f.ok) throw new Error("refused");
    f.permit.failure();
    c.advance(10);
    const trial = b.admit();
    if (!trial.ok) throw new Error("refused");
    trial.permit.failure();
    expect(b.state).toBe("open");
  });

  it("counts each permit once", () => {
    const b = new CircuitBreaker("t", { failureThreshold: 2 });
    const a = b.admit();
    if (!a.ok) throw new Error("refused");
    a.permit.failure();
    a.permit.failure();
    expect(b.state).toBe("closed");
  });

  it.each([
    [{ failureThreshold: 0 }],
    [{ coolDownMs: -1 }],
    [{ halfOpenMaxCalls: 1.5 }],
    [{ halfOpenMaxCalls: 1, halfOpenSuccesses: 2 }],
  ])("rejects bad options %o", (opts) => {
    expect(() => new BreakerRegistry(opts)).toThrowError(
      expect.objectContaining({ code: "ERR_EXEC_CONFIG_INVALID" }),
    );
  });

  it("an open breaker rejects without executing, says so, and every transition is journaled", async () => {
    const c = clock();
    const journal = new MemoryJournal();
    const breakers: BreakerRegistryType = new BreakerRegistry({
      failureThreshold: 2,
      coolDownMs: 5000,
      now: c.now,
    });
    journalBreakerTransitions(breakers, journal);
    const ex = new ProcessExecutor({ workDir: root }, { journal, breakers });
    let builds = 0;
    const failing: ProcessBinding = {
      name: "flaky",
      version: "1",
      build: () => {
        builds++;
        return { argv: ["false"] };
      },
    };
    const run = () => ex.execute(mint("flaky", {}, { toolClass: "shell" }), failing);
    expect(await run().then((r) => !r.ok && r.code)).toBe("ERR_EXEC_TOOL_FAILED");
    expect(await run().then((r) => !r.ok && r.code)).toBe("ERR_EXEC_TOOL_FAILED");
    const open = await run();
    expect(!open.ok && open.code).toBe("ERR_EXEC_CIRCUIT_OPEN");
    expect(!open.ok && open.message).toMatch(/open/);
    expect(!open.ok && open.evidence?.invocation).toBeNull();
    expect(builds).toBe(2);
    // A refusal before execution (an untrusted binary) does not count as a tool failure.
    c.advance(5000);
    const bad = await ex.execute(mint("flaky", {}, { toolClass: "shell" }), {
      ...failing,
      build: () => ({ argv: ["./x"] }),
    });
    expect(!bad.ok && bad.code).toBe("ERR_EXEC_BINARY_UNTRUSTED");
    expect(breakers.for("flaky").state).toBe("half_open");
    const ok = await ex.execute(mint("flaky", {}, { toolClass: "shell" }), {
      ...failing,
      build: () => ({ argv: ["true"] }),
    });
    expect(ok.ok).toBe(true);
    await new Promise((r) => setImmediate(r));
    expect(journal.ofType("warden.executor.breaker").map((e) => `${e.body.from}->${e.body.to}`)).toEqual([
      "closed->open",
      "open->half_open",
      "half_open->closed",
    ]);
  });
});
