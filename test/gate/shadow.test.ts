// Shadow policies at the Gate: the shadow bundle judges the very input the enforcing bundle
// judged, off the decision path, and decides nothing. Attacks on the mechanism: a shadow
// bundle that throws, a flood larger than its queue, a journal that refuses its entries —
// none of them changes, delays or fails an enforcing decision, and each is accounted for.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createSessionStore } from "../../src/context/index.js";
import { generateKeyPair, Keyring } from "../../src/crypto/index.js";
import { Gate, type GatePolicy, InProcessApprovals, ShadowPolicy } from "../../src/gate/index.js";
import { openJournal, SqliteJournalStore, verifyJournal } from "../../src/journal/index.js";
import { loadPolicyBundle } from "../../src/policy/index.js";
import { AGENT, req } from "./harness.js";

const ENFORCING = `
name: enforcing
version: "1"
rules:
  - { id: allow-get, name: reads, priority: 100, match: { toolClass: http, action: get }, decision: allow, reason: reads }
`;
const SHADOW = `
name: shadow
version: "1"
rules:
  - id: deny-internal
    name: no internal hosts
    priority: 50
    match: { toolClass: http, action: get, parameters: { url: { pattern: "internal" } } }
    decision: deny
    reason: internal hosts
  - { id: allow-get, name: reads, priority: 100, match: { toolClass: http, action: get }, decision: allow, reason: reads }
`;
const bundle = (text: string) => loadPolicyBundle({ yaml: [{ name: "p.yaml", text }] });

async function setup(shadowPolicy: GatePolicy, maxQueue?: number, failDiffs = false) {
  const dir = mkdtempSync(join(tmpdir(), "warden-shadow-"));
  const key = generateKeyPair("ed25519");
  const store = SqliteJournalStore.open(join(dir, "journal.db"));
  const journal = await openJournal({ store, signer: key });
  const shadowJournal = failDiffs
    ? {
        append: () => Promise.reject(new Error("disk full")),
        appendBuilt: () => Promise.reject(new Error("disk full")),
      }
    : journal;
  const shadow = new ShadowPolicy(shadowPolicy, shadowJournal, maxQueue === undefined ? {} : { maxQueue });
  const gate = new Gate({
    policy: bundle(ENFORCING),
    shadow,
    journal,
    signer: key,
    principals: { [AGENT.id]: AGENT },
    approvals: new InProcessApprovals(),
    sessions: createSessionStore({}),
  });
  const entries = async () => {
    const out: { type: string; body: Record<string, unknown> }[] = [];
    for await (const e of store.entries()) if ("body" in e) out.push({ type: e.type, body: e.body });
    return out;
  };
  return { gate, shadow, entries, verify: () => verifyJournal(store, new Keyring([key.publicKey])) };
}

describe("shadow policies at the Gate", () => {
  it("a call the shadow would deny is still allowed; the disagreement is journaled with both verdicts", async () => {
    const s = await setup(bundle(SHADOW));
    const o = await s.gate.evaluate(req({ parameters: { url: "https://internal.example/" } }));
    expect(o.decision).toBe("allow");
    await s.shadow.settle();
    const diffs = (await s.entries()).filter((e) => e.type === "warden.policy.shadow_diff");
    expect(diffs).toHaveLength(1);
    expect(diffs[0]?.body).toMatchObject({
      decision_id: o.decisionId,
      principal_id: AGENT.id,
      enforced: { decision: "allow", rule_ids: ["allow-get"] },
      shadow: {
        decision: "deny",
        rule_ids: ["deny-internal"],
        policy_bundle_hash: bundle(SHADOW).policyBundleHash,
      },
    });
    expect((await s.verify()).ok).toBe(true);
  });

  it("agreement writes nothing", async () => {
    const s = await setup(bundle(SHADOW));
    for (let i = 0; i < 5; i++) expect((await s.gate.evaluate(req())).decision).toBe("allow");
    await s.shadow.settle();
    expect((await s.entries()).filter((e) => e.type.startsWith("warden.policy.shadow"))).toHaveLength(0);
    expect(s.shadow.stats()).toMatchObject({ evaluated: 5, disagreed: 0 });
  });

  it("a shadow bundle that throws is recorded as the deny the Gate would make of it; enforcement goes on", async () => {
    const broken: GatePolicy = {
      policyBundleHash: bundle(SHADOW).policyBundleHash,
      evaluate: () => {
        throw new Error("boom");
      },
    };
    const s = await setup(broken);
    expect((await s.gate.evaluate(req())).decision).toBe("allow");
    await s.shadow.settle();
    const diff = (await s.entries()).find((e) => e.type === "warden.policy.shadow_diff");
    expect(diff?.body).toMatchObject({ shadow: { decision: "deny", reason_codes: ["policy_error"] } });
  });

  it("a flood larger than the shadow's queue is shed and the loss is journaled, never the decisions", async () => {
    const s = await setup(bundle(SHADOW), 2);
    const calls = Array.from({ length: 20 }, (_, i) =>
      s.gate.evaluate(req({ parameters: { url: `https://internal.example/${i}` } })),
    );
    const outcomes = await Promise.all(calls);
    expect(outcomes.every((o) => o.decision === "allow")).toBe(true);
    await s.shadow.settle();
    const stats = s.shadow.stats();
    expect(stats.evaluated + stats.dropped).toBe(20);
    expect(stats.dropped).toBeGreaterThan(0);
    const entries = await s.entries();
    const dropped = entries
      .filter((e) => e.type === "warden.policy.shadow_dropped")
      .reduce((n, e) => n + (e.body.dropped as number), 0);
    expect(dropped).toBe(stats.dropped);
    expect(entries.filter((e) => e.type === "warden.policy.shadow_diff")).toHaveLength(stats.evaluated);
    expect(entries.filter((e) => e.type === "warden.gate.decision")).toHaveLength(20);
  });

  it("a journal that refuses the shadow's entries fails nothing on the decision path and is counted", async () => {
    const s = await setup(bundle(SHADOW), undefined, true);
    const o = await s.gate.evaluate(req({ parameters: { url: "https://internal.example/" } }));
    expect(o.decision).toBe("allow");
    await s.shadow.settle();
    expect(s.shadow.stats()).toMatchObject({ disagreed: 1, journalFailed: 1 });
  });
});
