import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  createSessionStore,
  GENESIS_HASH,
  matchesAction,
  parseContextConfig,
  type SessionEvent,
  verifyContextChain,
} from "../../src/context/index.js";
import { sha256Of, TAINT_SOURCES } from "../../src/contracts/index.js";
import { AGENT, decide, expectCode, harness, observe, RUN, req, T0, web } from "./helpers.js";

const read = req({ toolClass: "file", action: "read", parameters: { path: "/data/a.txt" } });
const write = req({ toolClass: "file", action: "write", parameters: { path: "/data/b.txt", content: "x" } });
const post = req({ toolClass: "http", action: "post", parameters: { url: "https://api.example/x" } });
/** Denials of an unranked class, so they never arm denied_capability_then_escalation. */
const mail = req({ toolClass: "email", action: "send", parameters: { to: "a@b.example" } });
const reasons = (p: { preDecision?: { reasonCodes: string[] } }) => p.preDecision?.reasonCodes ?? [];

describe("session facts", () => {
  it("recent events are the last N decided calls still in the behavioural window (model-based)", () => {
    const step = fc.record({
      kind: fc.constantFrom("allow", "deny", "modify", "observe"),
      cls: fc.constantFrom("file", "http", "email"),
      tainted: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 6 }),
        fc.array(step, { maxLength: 30 }),
        (windowSize, n, steps) => {
          // Behavioural rules off: the property is about bookkeeping, not about rule matches.
          const { session } = harness({
            recentEventsInFacts: n,
            rules: { windowSize, enabled: [] },
            quarantine: { denialThreshold: 1000 },
          });
          for (const st of steps) {
            const r = req({
              toolClass: st.cls,
              action: "send",
              parameters: {},
              ...(st.tainted ? { taintLabels: [web()] } : {}),
            });
            if (st.kind === "observe") observe(session, r, "data");
            else decide(session, r, st.kind as "allow" | "deny" | "modify");
          }
          const inWindow = session
            .events()
            .filter((e) => e.type === "call.decided" || e.type === "call.result")
            .slice(-windowSize);
          const expected = inWindow
            .filter((e) => e.type === "call.decided")
            .slice(n === 0 ? inWindow.length : -n)
            .map((e) => (e.type === "call.decided" ? e : undefined)!)
            .map((e) => ({
              seq: e.seq,
              toolClass: e.toolClass,
              action: e.action,
              decision: e.decision,
              taint: [...new Set(e.taint.map((t) => t.source))],
            }));
          expect(session.snapshot().recentEvents).toEqual(expected);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("snapshots share the derived recent events until the run changes, then show the change", () => {
    const { session } = harness({ recentEventsInFacts: 2, taint: { sticky: true } });
    decide(session, read, "allow");
    const a = session.snapshot();
    const b = session.snapshot();
    // Each snapshot has its own arrays; the entries are frozen evidence shared between them.
    expect(a.recentEvents).not.toBe(b.recentEvents);
    expect(a.recentEvents[0]).toBe(b.recentEvents[0]);
    expect(Object.isFrozen(a.recentEvents[0])).toBe(true);
    expect(Object.isFrozen(a.recentEvents[0]!.taint)).toBe(true);
    expect(() => {
      (a.recentEvents[0] as { decision: string }).decision = "deny";
    }).toThrow(TypeError);
    a.recentEvents.push({ seq: 99, toolClass: "x", action: "y", decision: "allow", taint: [] });
    a.taintSeen!.push("web");
    expect(session.snapshot().recentEvents).toHaveLength(1);
    expect(session.snapshot().taintSeen).toEqual([]);
    // A decision changes the window: the next snapshot shows it (bounded to the last 2).
    decide(session, { ...post, taintLabels: [web()] }, "deny");
    decide(session, write, "allow");
    const c = session.snapshot();
    expect(c.recentEvents.map((e) => [e.toolClass, e.action, e.decision, e.taint])).toEqual([
      ["http", "post", "deny", ["web"]],
      ["file", "write", "allow", ["web"]],
    ]);
    expect(c.taintSeen).toEqual(["web"]);
    // A result changes the run's taint: the next snapshot shows that too.
    const p = decide(session, read, "allow");
    session.recordResult(p, {
      data: "x",
      taintLabels: [{ source: "rag", origin: "kb" }],
      classification: "public",
    });
    expect(session.snapshot().taintSeen).toEqual(expect.arrayContaining(["web", "rag", "tool-output"]));
    expect(session.snapshot().recentEvents.at(-1)).toMatchObject({ toolClass: "file", action: "read" });
  });

  it("accumulates counters, per-tool admissions and a bounded list of recent decisions", () => {
    const { session } = harness({ recentEventsInFacts: 3 });
    decide(session, read, "allow");
    decide(session, write, "modify");
    decide(session, post, "deny");
    decide(session, req({ toolClass: "email", action: "send", tool: "mailer" }), "step_up");
    decide(session, req({ toolClass: "email", action: "send", tool: "mailer" }), "defer");
    const f = session.snapshot();
    expect(f.counters).toEqual({
      proposed: 5,
      allowed: 1,
      denied: 1,
      deferred: 1,
      executed: 0,
      stepUps: 1,
      modified: 1,
    });
    expect(f.perToolCalls).toEqual({ "file:read": 1, "file:write": 1 });
    expect(f.recentEvents.map((e) => [e.toolClass, e.decision, e.tool])).toEqual([
      ["http", "deny", undefined],
      ["email", "step_up", "mailer"],
      ["email", "defer", "mailer"],
    ]);
    expect(f.principalId).toBe(AGENT);
    expect(sha256Of(f)).toMatch(/^sha256:/); // plain JSON, hashable
  });

  it("counts an approved step_up as an admission and a timed-out one as a denial", () => {
    const { session } = harness();
    const a = decide(session, write, "step_up");
    session.recordResolution(a, "allow", ["approved"]);
    session.recordResult(a, { data: "ok", classification: "public" });
    const b = decide(session, write, "defer");
    session.recordResolution(b, "deny", ["defer_timeout"]);
    expect(session.snapshot().counters).toMatchObject({
      proposed: 2,
      allowed: 1,
      denied: 1,
      stepUps: 1,
      deferred: 1,
      executed: 1,
    });
    expect(session.snapshot().perToolCalls).toEqual({ "file:write": 1 });
  });

  it("treats unlabelled and unknown data as the highest configured classification", () => {
    const { session } = harness();
    const p = decide(session, read, "allow");
    expect(session.recordResult(p, { data: "x" }).classification).toBe("secret");
    const q = decide(session, read, "allow");
    expect(session.recordResult(q, { data: "x", classification: "TOP-SECRET" }).classification).toBe(
      "secret",
    );
    const r = decide(session, read, "allow");
    session.recordResult(r, { data: "x", classification: "internal" });
    expect(session.snapshot()).toMatchObject({
      dataClassificationsSeen: ["internal", "secret"],
      highestClassification: "secret",
    });
  });

  it("uses configured classification levels in their order", () => {
    const { session } = harness({ classificationLevels: ["green", "amber", "red"] });
    const p = decide(session, read, "allow");
    session.recordResult(p, { data: 1, classification: "amber" });
    const q = decide(session, read, "allow");
    session.recordResult(q, { data: 1, classification: "green" });
    expect(session.snapshot()).toMatchObject({
      dataClassificationsSeen: ["green", "amber"],
      highestClassification: "amber",
    });
    const r = decide(session, read, "allow");
    session.recordResult(r, {});
    expect(session.snapshot().highestClassification).toBe("red");
  });

  it("propagates taint to outputs: executor labels ∪ the call's taint ∪ the boundary's own", () => {
    const { session } = harness();
    const p = decide(session, { ...post, taintLabels: [{ source: "rag", origin: "kb" }] }, "allow");
    const r = session.recordResult(p, { data: "ok", taintLabels: [{ source: "mcp", origin: "srv" }] });
    expect(r.taint.map((l) => `${l.source}:${l.origin}`)).toEqual([
      "mcp:srv",
      "rag:kb",
      "tool-output:http:post",
      "web:api.example",
    ]);
    expect(session.snapshot().taintSeen).toEqual(["rag", "mcp", "tool-output", "web"]);
  });

  it("sticky mode: every label seen in the run joins every later call's effective taint", () => {
    const { session } = harness({ taint: { sticky: true } });
    observe(session, req({ toolClass: "retrieval", action: "search", parameters: { q: "x" } }), "doc text");
    const p = session.prepare(write);
    expect(p.effectiveTaint.map((l) => l.source)).toEqual(expect.arrayContaining(["rag", "tool-output"]));
    const { session: plain } = harness();
    observe(plain, req({ toolClass: "retrieval", action: "search", parameters: { q: "x" } }), "doc text");
    expect(plain.prepare(write).effectiveTaint).toEqual([]);
  });
});

describe("budgets and rate limits", () => {
  it("denies once the tool-call budget is used up, counting admissions only", () => {
    const { session } = harness({ budgets: { toolCalls: 2 } });
    decide(session, read, "allow");
    decide(session, mail, "deny");
    expect(reasons(session.prepare(read))).toEqual([]);
    decide(session, read, "modify");
    const p = session.prepare(read);
    expect(reasons(p)).toEqual(["budget_tool_calls_exhausted"]);
    expect(p.facts.budgets.toolCalls).toEqual({ used: 2, limit: 2 });
  });

  it("denies once the token budget is used up (results and model usage)", () => {
    const { session } = harness({ budgets: { tokens: 1000 } });
    const p = decide(session, read, "allow");
    session.recordResult(p, { data: "x", tokens: 600 });
    expect(reasons(session.prepare(read))).toEqual([]);
    session.recordUsage({ tokens: 400 });
    expect(reasons(session.prepare(read))).toEqual(["budget_tokens_exhausted"]);
  });

  it("denies once the cost budget is used up", () => {
    const { session } = harness({ budgets: { cost: 1.5 } });
    session.recordUsage({ cost: 1.49 });
    expect(reasons(session.prepare(read))).toEqual([]);
    session.recordUsage({ cost: 0.01 });
    expect(session.prepare(read).facts.budgets.cost?.used).toBeCloseTo(1.5);
    expect(reasons(session.prepare(read))).toEqual(["budget_cost_exhausted"]);
  });

  it("denies once the wall-time budget has elapsed since the run opened", () => {
    const { session, clock } = harness({ budgets: { wallTimeMs: 60_000 } });
    clock.now = T0 + 59_999;
    expect(reasons(session.prepare(read))).toEqual([]);
    clock.now = T0 + 60_000;
    const p = session.prepare(read);
    expect(reasons(p)).toEqual(["budget_wall_time_exhausted"]);
    expect(p.facts.budgets.wallTimeMs).toEqual({ used: 60_000, limit: 60_000 });
  });

  it("rate-limits a principal over a sliding minute, across its runs, without extending the block", () => {
    const clock = { now: T0 };
    const store = createSessionStore({ rateLimits: { maxCallsPerMinute: 3 } }, { clock: () => clock.now });
    const s1 = store.open({ runId: "r1", principalId: AGENT });
    const s2 = store.open({ runId: "r2", principalId: AGENT });
    const other = store.open({ runId: "r3", principalId: "agent-2" });
    const call = (runId: string, principalId = AGENT) =>
      req({ toolClass: "file", action: "read", runId, principalId });
    decide(s1, call("r1"));
    clock.now += 10_000;
    decide(s2, call("r2"));
    decide(s1, call("r1"));
    const limited = s2.prepare(call("r2"));
    expect(reasons(limited)).toEqual(["rate_limited"]);
    s2.recordDecision(limited, "deny", reasons(limited)); // not counted
    expect(reasons(other.prepare(call("r3", "agent-2")))).toEqual([]);
    clock.now = T0 + 60_000; // the first call leaves the window
    expect(reasons(s1.prepare(call("r1")))).toEqual([]);
  });

  it("per-principal limits and the Gate's capability limit override the default", () => {
    const { session } = harness({ rateLimits: { maxCallsPerMinute: 100, perPrincipal: { [AGENT]: 1 } } });
    decide(session, read);
    expect(reasons(session.prepare(read))).toEqual(["rate_limited"]);
    expect(reasons(session.prepare(read, { maxCallsPerMinute: 5 }))).toEqual([]);
  });
});

describe("quarantine", () => {
  it("quarantines after N denials (default 5) and then admits only read-only actions", () => {
    const { session } = harness();
    for (let i = 0; i < 4; i++)
      expect(session.recordDecision(session.prepare(mail), "deny", ["policy"])).toHaveLength(1);
    const events = session.recordDecision(session.prepare(mail), "deny", ["policy"]);
    const q = events.find((e) => e.type === "quarantine");
    expect(q?.type === "quarantine" && q.trigger).toMatchObject({
      type: "denial_threshold",
      counters: { denied: 5, proposed: 5 },
      reason: "5 denials (threshold 5)",
    });
    expect(q?.type === "quarantine" && q.trigger.matchedEvents).toHaveLength(5);
    expect(reasons(session.prepare(write))).toEqual(["quarantined"]);
    expect(reasons(session.prepare(post))).toEqual(["quarantined"]);
    expect(reasons(session.prepare(read))).toEqual([]);
    expect(reasons(session.prepare(req({ toolClass: "retrieval", action: "search" })))).toEqual([]);
    expect(session.prepare(read).facts).toMatchObject({
      quarantined: true,
      quarantineReason: "5 denials (threshold 5)",
    });
  });

  it("counts a contract with a read-only category as read-only", () => {
    const { session } = harness();
    session.quarantine("operator");
    const crm = req({ toolClass: "crm", action: "lookup", tool: "crm.get_contact" });
    expect(reasons(session.prepare(crm))).toEqual(["quarantined"]);
    expect(reasons(session.prepare(crm, { tool: { category: "read_only" } }))).toEqual([]);
    expect(reasons(session.prepare(crm, { tool: { category: "reversible_write" } }))).toEqual([
      "quarantined",
    ]);
  });

  it("uses the configured threshold and read-only list", () => {
    const { session } = harness({ quarantine: { denialThreshold: 2, readOnly: ["kv:get"] } });
    decide(session, mail, "deny");
    expect(session.quarantined).toBe(false);
    decide(session, mail, "deny");
    expect(session.quarantined).toBe(true);
    expect(reasons(session.prepare(read))).toEqual(["quarantined"]);
    expect(reasons(session.prepare(req({ toolClass: "kv", action: "get" })))).toEqual([]);
  });

  it("is never lifted: not by allowed work, not by a second trigger, not by ending and reopening the run", () => {
    const { store, session } = harness();
    const first = session.quarantine("operator");
    expect(first).toHaveLength(1);
    for (let i = 0; i < 10; i++) decide(session, read, "allow");
    expect(session.quarantine("again")).toEqual([]);
    for (let i = 0; i < 6; i++) decide(session, post, "deny");
    expect(session.quarantineTrigger).toMatchObject({ type: "manual", reason: "operator" });
    expect(store.open({ runId: RUN, principalId: AGENT })).toBe(session);
    store.end(RUN);
    expectCode(() => store.open({ runId: RUN, principalId: AGENT }), "ERR_CONTEXT_SESSION_CLOSED");
    expectCode(() => session.prepare(read), "ERR_CONTEXT_SESSION_CLOSED");
  });
});

describe("run binding (attacks)", () => {
  it("denies a request from another principal in the run and counts it as a denial", () => {
    const { session } = harness({ quarantine: { denialThreshold: 1 } });
    const p = session.prepare(req({ toolClass: "file", action: "read", principalId: "intruder" }));
    expect(reasons(p)).toEqual(["run_principal_mismatch"]);
    session.recordDecision(p, "deny", reasons(p));
    expect(session.quarantined).toBe(true);
  });

  it("a request cannot alter the session through the object it passed in", () => {
    const { session } = harness();
    const r = req({ toolClass: "file", action: "read", parameters: { path: "/a" } });
    const p = session.prepare(r);
    (r.parameters as Record<string, unknown>).path = "/etc/shadow";
    expect(p.request.parameters.path).toBe("/a");
  });
});

describe("hash chain", () => {
  function run() {
    const { session } = harness({}, "do things");
    observe(session, read, "content");
    decide(session, post, "deny");
    session.recordUsage({ tokens: 10 });
    session.quarantine("operator");
    return session;
  }

  it("links every event to its predecessor; context_hash is the head", () => {
    const session = run();
    const events = session.events();
    expect(events[0]).toMatchObject({
      type: "session.opened",
      seq: 0,
      prev: GENESIS_HASH,
      originalRequestHash: sha256Of("do things"),
    });
    expect(events.map((e) => e.type)).toEqual([
      "session.opened",
      "call.decided",
      "call.result",
      "call.decided",
      "usage",
      "quarantine",
    ]);
    const v = verifyContextChain(events);
    expect(v).toEqual({ ok: true, head: session.contextHash(), length: 6 });
  });

  it("prepare changes nothing; the prepared context hash is the head the facts came from", () => {
    const { session } = harness();
    const before = session.contextHash();
    const p = session.prepare(post);
    session.prepare(post);
    expect(p.contextHash).toBe(before);
    expect(session.events()).toHaveLength(1);
    session.recordDecision(p, "allow", []);
    expect(session.contextHash()).not.toBe(before);
  });

  it("counts admissions per tool, a tool named __proto__ included, as own plain members", () => {
    const { session } = harness();
    const proto = req({ toolClass: "http", action: "get", tool: "__proto__", parameters: {} });
    decide(session, proto, "allow");
    decide(session, proto, "allow");
    decide(session, read, "allow");
    const f = session.snapshot();
    expect(Object.getPrototypeOf(f.perToolCalls)).toBe(Object.prototype);
    expect(Object.hasOwn(f.perToolCalls, "__proto__")).toBe(true);
    expect(Object.getOwnPropertyDescriptor(f.perToolCalls, "__proto__")?.value).toBe(2);
    expect(f.perToolCalls["file:read"]).toBe(1);
    // Each snapshot's object is its own.
    f.perToolCalls["file:read"] = 99;
    expect(session.snapshot().perToolCalls["file:read"]).toBe(1);
  });

  it("prepare keeps a private deep copy of the request, equal to structuredClone's (property)", () => {
    const shares = (a: unknown, b: unknown): boolean => {
      if (typeof a !== "object" || a === null) return false;
      if (a === b) return true;
      const bb = b as Record<string, unknown>;
      return Object.keys(a).some((k) => shares((a as Record<string, unknown>)[k], bb[k]));
    };
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 4 })), (parameters) => {
        const { session } = harness();
        const input = { ...post, parameters: parameters as typeof post.parameters };
        const p = session.prepare(input);
        expect(p.request).toEqual(structuredClone(input));
        expect(shares(p.request, input)).toBe(false);
        expect(Object.getOwnPropertyNames(p.request.parameters).sort()).toEqual(
          Object.getOwnPropertyNames(input.parameters).sort(),
        );
      }),
      { numRuns: 200 },
    );
    // An own "__proto__" member is copied as a member, never as the copy's prototype.
    const { session } = harness();
    const parameters = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, never>;
    const p = session.prepare({ ...post, parameters });
    expect(Object.getPrototypeOf(p.request.parameters)).toBe(Object.prototype);
    expect(Object.hasOwn(p.request.parameters, "__proto__")).toBe(true);
    expect((p.request.parameters as { polluted?: boolean }).polluted).toBeUndefined();
    // Data structuredClone refuses is still refused.
    expect(() => session.prepare({ ...post, parameters: { f: (() => 1) as never } })).toThrow();
  });

  it("prepare hashes the request once: the chain's call.decided cites the prepared request_hash", () => {
    const { session } = harness();
    const p = session.prepare(post);
    expect(p.requestHash).toBe(sha256Of(p.request));
    const [decided] = session.recordDecision(p, "deny", ["x"]);
    expect(decided).toMatchObject({ type: "call.decided", requestHash: p.requestHash });
    expect(verifyContextChain(session.events()).ok).toBe(true);
  });

  it("detects an altered, removed or reordered event", () => {
    const events = run().events();
    const altered: SessionEvent[] = structuredClone(events);
    const decided = altered[3]!;
    if (decided.type === "call.decided") decided.decision = "allow";
    expect(verifyContextChain(altered)).toMatchObject({ ok: false, code: "hash_mismatch", seq: 3 });
    expect(verifyContextChain([...events.slice(0, 2), ...events.slice(3)])).toMatchObject({
      ok: false,
      code: "seq_gap",
      seq: 2,
    });
    const relinked = events.map((e, i) => (i === 2 ? { ...e, prev: events[0]!.hash } : e));
    expect(verifyContextChain(relinked)).toMatchObject({ ok: false, code: "prev_mismatch", seq: 2 });
    const swapped = [events[0]!, { ...events[2]!, seq: 1 }, { ...events[1]!, seq: 2 }];
    expect(verifyContextChain(swapped)).toMatchObject({ ok: false });
  });

  it("hashes tool outputs rather than storing them", () => {
    const { session } = harness();
    const p = decide(session, read, "allow");
    const [e] = session.recordResult(p, { data: { secret: "hunter2" } }).events;
    expect(e).toMatchObject({ type: "call.result", outputHash: sha256Of({ secret: "hunter2" }) });
    expect(JSON.stringify(session.events())).not.toContain("hunter2");
  });
});

describe("misuse", () => {
  it("rejects a request for another run", () => {
    const { session } = harness();
    expectCode(
      () => session.prepare(req({ toolClass: "file", action: "read", runId: "other" })),
      "ERR_CONTEXT_RUN_MISMATCH",
    );
  });

  it("rejects a preparation from another session or recorded twice", () => {
    const a = harness().session;
    const b = createSessionStore().open({ runId: RUN, principalId: AGENT });
    const p = a.prepare(read);
    expectCode(() => b.recordDecision(p, "allow", []), "ERR_CONTEXT_FOREIGN_PREPARATION");
    expectCode(() => a.recordDecision({ ...p }, "allow", []), "ERR_CONTEXT_FOREIGN_PREPARATION");
    a.recordDecision(p, "allow", []);
    expectCode(() => a.recordDecision(p, "deny", []), "ERR_CONTEXT_ALREADY_RECORDED");
  });

  it("rejects a result for a call that was not admitted, or a second result", () => {
    const { session } = harness();
    const denied = decide(session, post, "deny");
    expectCode(() => session.recordResult(denied, { data: 1 }), "ERR_CONTEXT_NOT_ADMITTED");
    const pending = decide(session, post, "step_up");
    expectCode(() => session.recordResult(pending, { data: 1 }), "ERR_CONTEXT_NOT_ADMITTED");
    const undecided = session.prepare(read);
    expectCode(() => session.recordResult(undecided, { data: 1 }), "ERR_CONTEXT_NOT_ADMITTED");
    const ok = decide(session, read, "allow");
    session.recordResult(ok, { data: 1 });
    expectCode(() => session.recordResult(ok, { data: 1 }), "ERR_CONTEXT_ALREADY_RECORDED");
  });

  it("rejects resolving a decision that is not step_up/defer, or resolving twice", () => {
    const { session } = harness();
    const allowed = decide(session, read, "allow");
    expectCode(() => session.recordResolution(allowed, "allow", []), "ERR_CONTEXT_INPUT_INVALID");
    const s = decide(session, write, "step_up");
    session.recordResolution(s, "deny", ["timeout"]);
    expectCode(() => session.recordResolution(s, "allow", []), "ERR_CONTEXT_ALREADY_RECORDED");
  });

  it("rejects invalid result inputs", () => {
    const { session } = harness();
    const cases: [string, object][] = [
      ["taint", { taintLabels: [{ source: "internet", origin: "x" }] }],
      ["tokens", { tokens: -1 }],
      ["cost", { cost: Number.NaN }],
      ["data", { data: { f: () => 1 } }],
    ];
    for (const [what, input] of cases) {
      const p = decide(session, read, "allow");
      expectCode(() => session.recordResult(p, input), "ERR_CONTEXT_INPUT_INVALID");
      expect(what).toBeTruthy();
    }
    expectCode(() => session.recordUsage({ tokens: Number.POSITIVE_INFINITY }), "ERR_CONTEXT_INPUT_INVALID");
    expect(session.snapshot().counters.executed).toBe(0);
  });

  it("rejects an invalid run id or principal when opening", () => {
    expectCode(
      () => createSessionStore().open({ runId: "", principalId: AGENT }),
      "ERR_CONTEXT_INPUT_INVALID",
    );
    expectCode(
      () => createSessionStore().open({ runId: "r", principalId: "bad principal" }),
      "ERR_CONTEXT_INPUT_INVALID",
    );
  });

  it("rejects invalid configuration with the offending path", () => {
    const bad: [unknown, string][] = [
      [{ unknownKey: 1 }, ""],
      [{ classificationLevels: ["a", "a"] }, "classificationLevels"],
      [{ classificationLevels: [] }, "classificationLevels"],
      [{ budgets: { toolCalls: -1 } }, "budgets.toolCalls"],
      [{ rules: { enabled: ["no_such_rule"] } }, "rules.enabled.0"],
      [{ rules: { egress: ["http"] } }, "rules.egress.0"],
      [{ provenance: { minSubstring: 4 } }, "provenance.minSubstring"],
      [{ taint: { boundaries: { http: "internet" } } }, "taint.boundaries.http"],
    ];
    for (const [input, path] of bad) {
      let err: unknown;
      try {
        parseContextConfig(input);
      } catch (e) {
        err = e;
      }
      expect(err, JSON.stringify(input)).toMatchObject({
        code: "ERR_CONTEXT_CONFIG_INVALID",
        details: { path },
      });
    }
  });

  it("fills every default (Ari's values)", () => {
    const c = parseContextConfig();
    expect(c.quarantine.denialThreshold).toBe(5);
    expect(c.rules.windowSize).toBe(20);
    expect(c.rules.shellCommandLength).toBe(100);
    expect(c.classificationLevels).toEqual(["public", "internal", "confidential", "secret"]);
    expect(c.rules.classRisk).toEqual({ http: 1, database: 2, file: 3, shell: 5 });
    expect(web().source).toBe("web");
  });
});

describe("session taint properties", () => {
  it("taint seen in a run only grows, and every output carries its call's effective taint", () => {
    const label = fc.record({ source: fc.constantFrom(...TAINT_SOURCES), origin: fc.constantFrom("a", "b") });
    const step = fc.record({
      toolClass: fc.constantFrom("http", "file", "mcp", "retrieval", "shell"),
      labels: fc.array(label, { maxLength: 3 }),
      out: fc.array(label, { maxLength: 3 }),
      data: fc.string({ maxLength: 60 }),
      decision: fc.constantFrom("allow", "deny", "modify" as const),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 12 }), (steps) => {
        const { session } = harness({ quarantine: { denialThreshold: 1000 } }, "orig");
        let seen: string[] = [];
        for (const s of steps) {
          const p = session.prepare(
            req({ toolClass: s.toolClass, action: "get", taintLabels: s.labels, parameters: { v: s.data } }),
          );
          session.recordDecision(p, s.decision, []);
          if (s.decision !== "deny") {
            const r = session.recordResult(p, { data: s.data, taintLabels: s.out });
            const keys = new Set(r.taint.map((l) => `${l.source}/${l.origin}`));
            if (![...p.effectiveTaint, ...s.out].every((l) => keys.has(`${l.source}/${l.origin}`)))
              return false;
          }
          const now = session.snapshot().taintSeen ?? [];
          if (!seen.every((x) => now.includes(x as never))) return false;
          seen = now;
        }
        return true;
      }),
      { numRuns: 150 },
    );
  });
});

describe("matchesAction", () => {
  const reference = (patterns: readonly string[], toolClass: string, action: string) =>
    patterns.some((p) => {
      const i = p.lastIndexOf(":");
      const c = p.slice(0, i);
      const a = p.slice(i + 1);
      return (c === "*" || c === toolClass) && (a === "*" || a === action);
    });

  it("matches exactly as splitting each pattern at its last colon would (property)", () => {
    const part = fc.stringMatching(/^[a-c*:]{0,4}$/);
    fc.assert(
      fc.property(fc.array(part, { maxLength: 5 }), part, part, (patterns, c, a) => {
        expect(matchesAction(patterns, c, a)).toBe(reference(patterns, c, a));
      }),
      { numRuns: 3000 },
    );
    expect(matchesAction(["file:*"], "file", "read")).toBe(true);
    expect(matchesAction(["*:read"], "http", "read")).toBe(true);
    expect(matchesAction(["file:read"], "files", "read")).toBe(false);
    expect(matchesAction(["file:read"], "file", "reads")).toBe(false);
  });
});
