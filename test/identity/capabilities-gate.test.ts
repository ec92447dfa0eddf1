// Capability tokens at the Gate, through the composed runtime: checked before policy,
// visible to policy as a fact (`match: { capability: true }`), refusals denied with their
// code and journaled, grants journaled without the token, use counting exact under 40
// concurrent calls, and a token replayed after its run ended refused.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { generateKeyPair, Keyring } from "../../src/crypto/index.js";
import { CapabilityService } from "../../src/identity/capabilities/index.js";
import { openEmbeddedStore, verifyJournal } from "../../src/journal/index.js";
import { CAPABILITY_GRANTED_EVENT, composeRuntime, type Runtime } from "../../src/runtime/index.js";

// Mail may go out only with a capability; reads are allowed without one.
const POLICY = `
rules:
  - { id: mail-with-cap, name: mail, priority: 100, match: { toolClass: http, action: post, capability: true }, decision: allow, reason: granted }
  - { id: reads, name: reads, priority: 100, match: { toolClass: file, action: read }, decision: allow, reason: r }
`;

const open: Runtime[] = [];
afterEach(async () => {
  for (const rt of open.splice(0)) await rt.close();
});

async function runtime() {
  const dir = mkdtempSync(join(tmpdir(), "warden-cap-"));
  writeFileSync(join(dir, "policy.yaml"), POLICY);
  const signer = generateKeyPair("ed25519");
  const journalPath = join(dir, "journal.db");
  const rt = await composeRuntime({
    policy: [join(dir, "policy.yaml")],
    journal: { path: journalPath, signer },
    gate: {
      principals: {
        "agent-a": { id: "agent-a", roles: ["agent"] },
        "agent-b": { id: "agent-b", roles: ["agent"] },
      },
      requireContract: false,
      runs: "runtime",
    },
  });
  open.push(rt);
  return { rt, signer, journalPath };
}

const mail = (runId: string, capability?: string, to = "bob@example.com", principalId = "agent-a") => ({
  principalId,
  runId,
  toolClass: "http",
  action: "post",
  parameters: { url: "https://mail.example.com/send", to },
  ...(capability !== undefined ? { capability } : {}),
});

const GRANT = {
  toolClass: "http",
  action: "post",
  constraints: { to: { pattern: "^[a-z]+@example\\.com$" } },
  maxUses: 5,
  ttlMs: 60_000,
};

async function journalText(path: string, rt: Runtime): Promise<{ types: string[]; raw: string }> {
  await rt.close();
  const store = openEmbeddedStore(path, { readonly: true });
  try {
    const types: string[] = [];
    const bodies: unknown[] = [];
    for await (const e of store.entries()) {
      if ("type" in e) types.push(e.type);
      bodies.push(e);
    }
    return { types, raw: JSON.stringify(bodies) };
  } finally {
    await store.close();
  }
}

describe("capability tokens at the Gate", () => {
  it("a call a rule allows only with a capability is denied without one and allowed with one", async () => {
    const { rt } = await runtime();
    const run = await rt.startRun("agent-a");
    expect((await rt.gate.evaluate(mail(run.runId))).decision).toBe("deny");
    const cap = await rt.grant(run.runId, GRANT, "operator-1");
    const o = await rt.gate.evaluate(mail(run.runId, cap.token));
    expect(o.decision).toBe("allow");
    expect(o.matchedRules.map((r) => r.id)).toContain("mail-with-cap");
  });

  it("policy sees the capability as a fact with its uses left", async () => {
    const { rt } = await runtime();
    const seen: unknown[] = [];
    const evaluate = rt.policy.evaluate.bind(rt.policy);
    (rt.policy as { evaluate: typeof evaluate }).evaluate = (input) => {
      seen.push(input.capability);
      return evaluate(input);
    };
    const run = await rt.startRun("agent-a");
    const cap = await rt.grant(run.runId, GRANT);
    await rt.gate.evaluate(mail(run.runId, cap.token));
    expect(seen).toEqual([{ id: cap.id, tool: "http:post", usesLeft: 4 }]);
  });

  it("an agent that forges a capability is denied with ERR_CAPABILITY_INVALID before policy", async () => {
    const { rt, journalPath } = await runtime();
    const run = await rt.startRun("agent-a");
    const forger = new CapabilityService({
      signer: generateKeyPair("ed25519"),
      ledger: rt.sessions.ledger,
      runOpen: () => true,
    });
    const forged = forger.issue(run.runId, "agent-a", { scope: { toolClass: "http" }, maxUses: 99 });
    const o = await rt.gate.evaluate(mail(run.runId, forged.token));
    expect(o).toMatchObject({ decision: "deny", reasonCodes: ["ERR_CAPABILITY_INVALID"] });
    expect(o.matchedRules[0]?.source).toBe("builtin");
    const { raw } = await journalText(journalPath, rt);
    expect(raw).toContain("ERR_CAPABILITY_INVALID");
  });

  it("a capability for parameters outside its constraints is denied with ERR_CAPABILITY_CONSTRAINT", async () => {
    const { rt } = await runtime();
    const run = await rt.startRun("agent-a");
    const cap = await rt.grant(run.runId, GRANT);
    const o = await rt.gate.evaluate(mail(run.runId, cap.token, "eve@evil.test"));
    expect(o).toMatchObject({ decision: "deny", reasonCodes: ["ERR_CAPABILITY_CONSTRAINT"] });
  });

  it("another principal presenting a stolen capability in its own run is denied ERR_CAPABILITY_SCOPE", async () => {
    const { rt } = await runtime();
    const runA = await rt.startRun("agent-a");
    const runB = await rt.startRun("agent-b");
    const cap = await rt.grant(runA.runId, GRANT);
    const o = await rt.gate.evaluate(mail(runB.runId, cap.token, "bob@example.com", "agent-b"));
    expect(o).toMatchObject({ decision: "deny", reasonCodes: ["ERR_CAPABILITY_SCOPE"] });
  });

  it("40 concurrent calls with a 5-use capability: exactly 5 allowed", async () => {
    const { rt } = await runtime();
    const run = await rt.startRun("agent-a");
    const cap = await rt.grant(run.runId, GRANT);
    const outs = await Promise.all(
      Array.from({ length: 40 }, () => rt.gate.evaluate(mail(run.runId, cap.token))),
    );
    expect(outs.filter((o) => o.decision === "allow")).toHaveLength(5);
    expect(outs.filter((o) => o.reasonCodes.includes("ERR_CAPABILITY_EXHAUSTED"))).toHaveLength(35);
  });

  it("a capability replayed after its run ended is refused", async () => {
    const { rt } = await runtime();
    const run = await rt.startRun("agent-a");
    const cap = await rt.grant(run.runId, GRANT);
    rt.sessions.end(run.runId);
    // With runtime-created runs an ended run is refused at admission; the token check
    // itself refuses it too (a Gate on caller-named runs relies on that).
    expect((await rt.gate.evaluate(mail(run.runId, cap.token))).decision).toBe("deny");
    const direct = await rt.capabilities.check({
      token: cap.token,
      runId: run.runId,
      principalId: "agent-a",
      toolClass: "http",
      action: "post",
      parameters: { to: "bob@example.com" },
      now: Date.now(),
    });
    expect(direct).toMatchObject({ ok: false, code: "ERR_CAPABILITY_RUN_ENDED" });
  });

  it("the grant is journaled with its terms but never the token", async () => {
    const { rt, journalPath, signer } = await runtime();
    const run = await rt.startRun("agent-a");
    const cap = await rt.grant(run.runId, GRANT, "operator-1");
    await rt.gate.evaluate(mail(run.runId, cap.token));
    const { types, raw } = await journalText(journalPath, rt);
    expect(types).toContain(CAPABILITY_GRANTED_EVENT);
    // The grant and the decision that used it both name the capability by id.
    expect(raw.split(cap.id).length - 1).toBeGreaterThanOrEqual(2);
    expect(raw).toContain(`"capability_id":"${cap.id}"`);
    expect(raw).not.toContain(cap.token.split(".")[2]!);
    const store = openEmbeddedStore(journalPath, { readonly: true });
    try {
      expect((await verifyJournal(store, new Keyring([signer.publicKey]))).ok).toBe(true);
    } finally {
      await store.close();
    }
  });

  it("granting for another principal's ended or unknown run is refused", async () => {
    const { rt } = await runtime();
    await expect(rt.grant("run-nope", GRANT)).rejects.toMatchObject({ code: "ERR_CAPABILITY_GRANT_INVALID" });
    await expect(rt.grant("x", { ...GRANT, tool: "mailer" })).rejects.toMatchObject({
      code: "ERR_CAPABILITY_GRANT_INVALID",
    });
  });
});
