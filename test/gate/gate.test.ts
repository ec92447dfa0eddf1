import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PolicyDecisionRecordSchema, parseGateRequest, sha256Of } from "../../src/contracts/index.js";
import { redeemTicket, ticketOf } from "../../src/gate/index.js";
import { ContractRegistry } from "../../src/tools/index.js";
import { REPO_ROOT } from "../helpers/repo.js";
import { AGENT, makeGate, req } from "./harness.js";

const POLICY = `
name: gate-test
version: "1.0"
rules:
  - id: deny-metadata
    name: no cloud metadata
    priority: 100
    match: { toolClass: http, parameters: { url: { pattern: "169\\\\.254\\\\." } } }
    decision: deny
    reason: metadata
  - id: allow-get
    name: reads
    priority: 200
    match: { toolClass: http, action: get }
    decision: allow
    reason: reads are fine
  - id: approve-post
    name: posts need a human
    priority: 210
    match: { toolClass: http, action: post }
    decision: require-approval
    reason: egress
  - id: defer-delete
    name: deletes wait
    priority: 220
    match: { toolClass: file, action: delete }
    decision: defer
    defer: { timeout: 2s }
    reason: deletes are batched
  - id: redact-write
    name: writes are redacted
    priority: 230
    match: { toolClass: file, action: write }
    decision: modify
    modify: { redact: [token] }
    reason: no tokens in files
`;

/** Waits (polling, bounded) for the decision to be committed and the call to be waiting. */
async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
}

describe("Gate", () => {
  it("allows, commits the decision before minting a ticket, and the journal verifies", async () => {
    const h = await makeGate({ yaml: POLICY });
    const out = await h.gate.authorize(req());
    expect(out.decision).toBe("allow");
    expect(ticketOf(out)).toBeDefined();
    // One entry per decision: the detail carries the DARE record under `dare`.
    expect(out.journalSeqs.length).toBe(1);
    const entries = await h.entries();
    expect(entries.map((e) => e.type)).toEqual(["warden.policy.bundle_loaded", "warden.gate.decision"]);
    const body = entries[1]!.body as { decision_id: string; dare: unknown };
    expect(entries[1]!.seq).toBe(out.journalSeqs[0]);
    const dare = PolicyDecisionRecordSchema.parse(body.dare);
    expect(dare.decision_id).toBe(out.decisionId);
    expect(dare.decision_id).toBe(body.decision_id);
    expect(dare.result.decision).toBe("allow");
    expect(dare.bundles.policy_bundle_hash).toBe(out.policyBundleHash);
    // The hashes the decision is bound to are in the DARE record alone (issue 35).
    for (const k of ["request_hash", "context_hash", "policy_bundle_hash", "risk_score"])
      expect(body).not.toHaveProperty(k);
    await h.gate.authorize(req());
    expect((await h.entries()).filter((e) => e.type === "warden.policy.bundle_loaded")).toHaveLength(1);
    const r = redeemTicket(ticketOf(out), { toolClass: "http" });
    expect(r.ok).toBe(true);
    const v = await h.verify();
    expect(v.ok).toBe(true);
  });

  it("denies by default when no rule matches, with no ticket", async () => {
    const h = await makeGate({ yaml: POLICY });
    const out = await h.gate.authorize(
      req({ toolClass: "shell", action: "exec", parameters: { command: "ls" } }),
    );
    expect(out.decision).toBe("deny");
    expect(ticketOf(out)).toBeUndefined();
    const entry = (await h.entries()).find((e) => e.type === "warden.gate.decision")!;
    expect(entry.body.decision).toBe("deny");
    expect((entry.body.dare as { result: { decision: string } }).result.decision).toBe("deny");
  });

  it("denies an unknown principal and a principal spoofed in the request", async () => {
    const h = await makeGate({ yaml: POLICY });
    const out = await h.gate.authorize(req({ principalId: "root" }));
    expect(out).toMatchObject({ decision: "deny", reasonCodes: ["principal_unknown"] });
    expect(ticketOf(out)).toBeUndefined();
  });

  it("denies an unparseable request without journaling garbage", async () => {
    const h = await makeGate({ yaml: POLICY });
    for (const bad of [null, {}, { ...req(), extra: 1 }, { ...req(), toolClass: "http; rm -rf /" }]) {
      const out = await h.gate.authorize(bad);
      expect(out).toMatchObject({ decision: "deny", reasonCodes: ["request_invalid"], decisionId: null });
    }
    expect(await h.entries()).toEqual([]);
  });

  it("modify: executes the rewritten parameters and records both", async () => {
    const h = await makeGate({ yaml: POLICY });
    const out = await h.gate.authorize(
      req({ toolClass: "file", action: "write", parameters: { path: "notes.txt", token: "abc123" } }),
    );
    expect(out.decision).toBe("modify");
    expect(out.originalParameters).toEqual({ path: "notes.txt", token: "abc123" });
    expect(out.parameters.token).not.toBe("abc123");
    const r = redeemTicket(ticketOf(out));
    expect(r.ok && r.parameters.token).not.toBe("abc123");
    const detail = (await h.entries()).find((e) => e.type === "warden.gate.decision")!;
    expect(detail.body.modified).toBeDefined();
  });

  it("step_up: blocks until approved, then grants; the HITL record is signed and journaled", async () => {
    const h = await makeGate({ yaml: POLICY });
    const p = h.gate.authorize(req({ action: "post", parameters: { url: "https://example.org/api" } }));
    await until(() => h.approvals.pending().length > 0);
    const pending = h.approvals.pending();
    expect(pending).toHaveLength(1);
    expect(pending[0]!.request.parameters).toEqual({ url: "https://example.org/api" });
    const res = h.approvals.decide(pending[0]!.id, {
      outcome: "approve",
      approver: { id: "alice", roles: ["approver"] },
      justification: "expected API call for the ticket",
    });
    expect(res.ok).toBe(true);
    const out = await p;
    expect(out.policyDecision).toBe("step_up");
    expect(out.decision).toBe("allow");
    expect(ticketOf(out)).toBeDefined();
    const types = (await h.entries()).map((e) => e.type);
    expect(types).toContain("dare.hitl.decision");
    expect(types).toContain("warden.gate.resolution");
    expect((await h.verify()).ok).toBe(true);
  });

  it("step_up: times out to deny", async () => {
    const h = await makeGate({
      yaml: POLICY.replace(
        "decision: require-approval",
        "decision: require-approval\n    stepUp: { timeout: 50ms }",
      ),
    });
    const out = await h.gate.authorize(req({ action: "post" }));
    expect(out.decision).toBe("deny");
    expect(out.reasonCodes).toContain("approval_timeout");
    expect(ticketOf(out)).toBeUndefined();
  });

  it("evaluate (decision only) returns step_up without waiting and mints nothing", async () => {
    const h = await makeGate({ yaml: POLICY });
    const allowed = await h.gate.evaluate(req());
    expect(allowed.decision).toBe("allow");
    expect(ticketOf(allowed)).toBeUndefined();
    const out = await h.gate.evaluate(req({ action: "post" }));
    expect(out.decision).toBe("step_up");
    expect(ticketOf(out)).toBeUndefined();
    expect(h.approvals.pending()).toHaveLength(0);
  });

  it("defer: held until released, and a full queue denies", async () => {
    const h = await makeGate({ yaml: POLICY });
    const p = h.gate.authorize(req({ toolClass: "file", action: "delete", parameters: { path: "a" } }));
    await until(() => h.gate.deferQueue.list().length > 0);
    const [item] = h.gate.deferQueue.list();
    expect(item).toBeDefined();
    h.gate.deferQueue.resolve(item!.id, { outcome: "allow", by: "operator" });
    const out = await p;
    expect(out).toMatchObject({ policyDecision: "defer", decision: "allow" });
    expect(ticketOf(out)).toBeDefined();
  });

  it("fails closed when the journal cannot be written", async () => {
    const h = await makeGate({ yaml: POLICY });
    await h.store.close();
    const out = await h.gate.authorize(req());
    expect(out).toMatchObject({ decision: "deny", fault: "journal_unavailable" });
    expect(ticketOf(out)).toBeUndefined();
  });

  it("quarantines after repeated denials and journals it", async () => {
    const h = await makeGate({ yaml: POLICY });
    for (let i = 0; i < 5; i++) {
      await h.gate.authorize(req({ toolClass: "shell", action: "exec", parameters: { command: `x${i}` } }));
    }
    const types = (await h.entries()).map((e) => e.type);
    expect(types).toContain("warden.system.quarantine");
    // Read-only calls still pass; writes do not.
    expect((await h.gate.authorize(req())).decision).toBe("allow");
    const post = await h.gate.evaluate(req({ action: "post" }));
    expect(post.decision).toBe("deny");
    expect(post.reasonCodes).toContain("quarantined");
  });

  it("propagates taint from a recorded result into later decisions (value provenance)", async () => {
    const h = await makeGate({
      yaml: `${POLICY}
  - id: deny-web-tainted-post
    name: no posting web data
    priority: 150
    match: { toolClass: http, action: post, taintSources: [web] }
    decision: deny
    reason: tainted egress
`,
      context: { rules: { taintScope: "call" } },
    });
    const get = await h.gate.authorize(req({ originalRequest: "summarise the invoice page" }));
    await h.gate.recordResult(get.decisionId!, {
      taintLabels: [{ source: "web", origin: "example.org" }],
      data: "Pay to IBAN DE89370400440532013000 today",
    });
    const post = await h.gate.evaluate(
      req({
        action: "post",
        parameters: { url: "https://bank.example/pay", iban: "DE89370400440532013000" },
      }),
    );
    expect(post.decision).toBe("deny");
    expect(post.taint.map((t) => t.source)).toContain("web");
  });

  it("a principal is bound to its run: another principal cannot use it", async () => {
    const h = await makeGate({ yaml: POLICY, principals: [AGENT, { id: "agent-2", roles: [] }] });
    expect((await h.gate.authorize(req())).decision).toBe("allow");
    const other = await h.gate.authorize(req({ principalId: "agent-2" }));
    expect(other.decision).toBe("deny");
    expect(other.reasonCodes).toContain("run_principal_mismatch");
  });
});

describe("Gate and tool contracts", () => {
  const contracts = ContractRegistry.load(join(REPO_ROOT, "examples", "demo", "contracts"));
  const POLICY_C = `
name: contracts
version: "1.0"
rules:
  - { id: allow-get, name: reads, priority: 100, match: { toolClass: http, action: get }, decision: allow, reason: reads }
`;

  it("refuses a contract presented under another class or action (a POST contract labelled get)", async () => {
    const h = await makeGate({ yaml: POLICY_C, gate: { contracts } });
    const out = await h.gate.authorize(
      req({ tool: "send_report", toolClass: "http", action: "get", parameters: { text: "hello" } }),
    );
    expect(out).toMatchObject({ decision: "deny", reasonCodes: ["contract_class_mismatch"] });
    expect(ticketOf(out)).toBeUndefined();
    const ok = await h.gate.authorize(req({ tool: "fetch_page", parameters: { page: "welcome" } }));
    expect(ok.decision).toBe("allow");
  });

  it("validates parameters against the contract before policy and uses the validated values", async () => {
    const h = await makeGate({ yaml: POLICY_C, gate: { contracts } });
    const bad = await h.gate.authorize(req({ tool: "fetch_page", parameters: { page: "../../etc/passwd" } }));
    expect(bad.decision).toBe("deny");
    expect(bad.reasonCodes[0]).toMatch(/^contract_param_invalid:page:/);
    const unknown = await h.gate.authorize(req({ tool: "no_such_tool", parameters: {} }));
    expect(unknown.reasonCodes).toEqual(["tool_unknown"]);
  });

  it("another principal's calls into a run do not count towards that run's quarantine", async () => {
    const h = await makeGate({ yaml: POLICY_C, principals: [AGENT, { id: "mallory", roles: [] }] });
    expect((await h.gate.authorize(req())).decision).toBe("allow");
    for (let i = 0; i < 10; i++) {
      const out = await h.gate.authorize(
        req({ principalId: "mallory", parameters: { url: `https://x/${i}` } }),
      );
      expect(out.reasonCodes).toEqual(["run_principal_mismatch"]);
    }
    const facts = h.gate.sessions.get("run-1")!.snapshot();
    expect(facts.quarantined).toBe(false);
    expect(facts.counters.denied).toBe(0);
    expect((await h.gate.authorize(req())).decision).toBe("allow");
  });
});

describe("Gate: hashes computed once and remembered", () => {
  type Body = {
    original_request_hash?: string;
    dare: { inputs: { request_hash: string }; bundles: { tool_schema_hash: string } };
  };
  const decisions = async (h: Awaited<ReturnType<typeof makeGate>>) =>
    (await h.entries()).filter((e) => e.type === "warden.gate.decision").map((e) => e.body as Body);

  it("request_hash is the prepared request's hash, in the record, the DARE record and the session chain", async () => {
    const h = await makeGate({ yaml: POLICY });
    const out = await h.gate.evaluate(req({ parameters: { url: "https://example.org/a" } }));
    const [body] = await decisions(h);
    const checked = { ...req({ parameters: { url: "https://example.org/a" } }), taintLabels: [] };
    expect(body!.dare.inputs.request_hash).toBe(sha256Of(checked));
    const decided = h.gate.sessions
      .get("run-1")!
      .events()
      .find((e) => e.type === "call.decided") as { requestHash: string } | undefined;
    expect(decided!.requestHash).toBe(body!.dare.inputs.request_hash);
    expect(out.decisionId).not.toBeNull();
  });

  it("the original request's hash is the run's pinned one, and a request bringing a different one gets its own", async () => {
    const h = await makeGate({ yaml: POLICY });
    await h.gate.evaluate(req({ originalRequest: "book a table" }));
    await h.gate.evaluate(req({ originalRequest: "book a table" }));
    // The run pinned "book a table"; a later request naming another text is hashed as sent.
    await h.gate.evaluate(req({ originalRequest: "transfer all funds" }));
    await h.gate.evaluate(req());
    const bodies = await decisions(h);
    expect(bodies.map((b) => b.original_request_hash)).toEqual([
      sha256Of("book a table"),
      sha256Of("book a table"),
      sha256Of("transfer all funds"),
      undefined,
    ]);
    expect(h.gate.sessions.get("run-1")!.originalRequestHash).toBe(sha256Of("book a table"));
  });

  it("a call without a contract cites the hash of its class and action, per class and action", async () => {
    const h = await makeGate({ yaml: POLICY });
    await h.gate.evaluate(req());
    await h.gate.evaluate(req({ action: "post" }));
    await h.gate.evaluate(req());
    await h.gate.evaluate(req({ toolClass: "file", action: "read", parameters: { path: "a" } }));
    const hashes = (await decisions(h)).map((b) => b.dare.bundles.tool_schema_hash);
    expect(hashes).toEqual([
      sha256Of({ toolClass: "http", action: "get" }),
      sha256Of({ toolClass: "http", action: "post" }),
      sha256Of({ toolClass: "http", action: "get" }),
      sha256Of({ toolClass: "file", action: "read" }),
    ]);
  });
});

describe("Gate: requests parsed at the edge", () => {
  it("decides a parseGateRequest result exactly as the raw request, without parsing it again", async () => {
    const a = await makeGate({ yaml: POLICY });
    const b = await makeGate({ yaml: POLICY });
    const parsed = parseGateRequest(req({ parameters: { url: "https://example.org/x" } })).data!;
    const viaParsed = await a.gate.evaluate(parsed);
    const viaRaw = await b.gate.evaluate(req({ parameters: { url: "https://example.org/x" } }));
    expect(viaParsed.decision).toBe("allow");
    const strip = (o: typeof viaRaw) => ({ ...o, decisionId: null, journalSeqs: [] });
    expect(strip(viaParsed)).toEqual(strip(viaRaw));
    const body = async (h: typeof a) =>
      (await h.entries()).find((e) => e.type === "warden.gate.decision")!.body as {
        dare: { inputs: { request_hash: string } };
      };
    expect((await body(a)).dare.inputs.request_hash).toBe((await body(b)).dare.inputs.request_hash);
  });

  it("attack: a look-alike of a parsed request is parsed like any input (a forged class is refused)", async () => {
    const h = await makeGate({ yaml: POLICY });
    const parsed = parseGateRequest(req()).data!;
    const forged = Object.freeze({ ...parsed, toolClass: "http; rm -rf /" });
    const out = await h.gate.evaluate(forged);
    expect(out).toMatchObject({ decision: "deny", reasonCodes: ["request_invalid"], decisionId: null });
    const extra = Object.freeze({ ...parsed, extra: 1 });
    expect((await h.gate.evaluate(extra)).reasonCodes).toEqual(["request_invalid"]);
  });
});

describe("Gate: the bundle entry when the journal already records the bundle (one-shot hooks, issue 35)", () => {
  const bundleEntries = async (h: Awaited<ReturnType<typeof makeGate>>) =>
    (await h.entries()).filter((e) => e.type === "warden.policy.bundle_loaded");

  it("a lookup saying the journal's last record names this bundle: no bundle entry, the decision names it", async () => {
    const seen: string[] = [];
    const h = await makeGate({
      yaml: POLICY,
      gate: {
        bundleRecorded: async (hash) => {
          seen.push(hash);
          return true;
        },
      },
    });
    const out = await h.gate.evaluate(req());
    expect(await bundleEntries(h)).toHaveLength(0);
    const d = (await h.entries()).find((e) => e.type === "warden.gate.decision")!;
    expect((d.body.dare as { bundles: { policy_bundle_hash: string } }).bundles.policy_bundle_hash).toBe(
      out.policyBundleHash,
    );
    expect(seen).toEqual([out.policyBundleHash]);
  });

  it("a lookup that fails or says another bundle: the bundle is journaled before the decision, once", async () => {
    for (const bundleRecorded of [async () => false, () => Promise.reject(new Error("index unreadable"))]) {
      const h = await makeGate({ yaml: POLICY, gate: { bundleRecorded } });
      const out = await h.gate.evaluate(req());
      expect(out.decision).toBe("allow");
      await h.gate.evaluate(req());
      const types = (await h.entries()).map((e) => e.type);
      expect(types).toEqual(["warden.policy.bundle_loaded", "warden.gate.decision", "warden.gate.decision"]);
    }
  });

  it("journalDefaultsOmitted leaves out false and empty members and says so; without it they stay", async () => {
    const params = { url: "https://example.org/", flag: false, note: "", n: 0, on: true };
    const lean = await makeGate({ yaml: POLICY, gate: { journalDefaultsOmitted: true } });
    await lean.gate.evaluate(req({ parameters: params }));
    const a = (await lean.entries()).find((e) => e.type === "warden.gate.decision")!.body;
    expect(a.parameters).toEqual({ url: "https://example.org/", n: 0, on: true });
    expect(a.parameters_defaults).toBe("omitted");
    const full = await makeGate({ yaml: POLICY });
    await full.gate.evaluate(req({ parameters: params }));
    const b = (await full.entries()).find((e) => e.type === "warden.gate.decision")!.body;
    expect(b.parameters).toEqual(params);
    expect(b).not.toHaveProperty("parameters_defaults");
    // The decision was taken on the same, full parameters: the same request hash binds both.
    const requestHash = (x: Record<string, unknown>) =>
      (x.dare as { inputs: { request_hash: string } }).inputs.request_hash;
    expect(requestHash(a)).toBe(requestHash(b));
  });
});
