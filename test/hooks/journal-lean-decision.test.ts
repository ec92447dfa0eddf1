// A hook's Gate decision entry leaves out the shell and file facts at false/"" (issue 35,
// lean per-entry work: ~16 of the 17 shell facts of an ordinary command are unset), saying
// so (`parameters_defaults: "omitted"`). What an auditor needs to tell what decided stays:
// the decision, reason codes, matched rule ids, the facts that were set (the one that denied
// a destructive command among them), the command, policy bundle, request and context
// hashes, principal, run, time and the DARE record, and the journal still verifies and maps
// to OCSF.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PolicyDecisionRecordSchema } from "../../src/contracts/index.js";
import { generateKeyPair, Keyring } from "../../src/crypto/index.js";
import { answerHostEvent, claudeCodeAdapter, createEngine } from "../../src/hooks/index.js";
import { type JournalEntry, openEmbeddedStore, verifyJournal } from "../../src/journal/index.js";
import { toOcsf } from "../../src/telemetry/index.js";
import { claudeBash, tempDir, WORKSPACE } from "./helpers.js";

const signer = generateKeyPair("ed25519");

const bash = (command: string) => claudeBash(command, "a command");

async function decisionsOf(path: string): Promise<JournalEntry[]> {
  const store = openEmbeddedStore(path, { readonly: true });
  try {
    const out: JournalEntry[] = [];
    for await (const e of store.entries()) {
      if ((e as JournalEntry).type === "warden.gate.decision") out.push(e as JournalEntry);
    }
    expect((await verifyJournal(store, new Keyring([signer.publicKey]))).ok).toBe(true);
    return out;
  } finally {
    await store.close();
  }
}

async function oneShot(path: string, command: string) {
  const engine = await createEngine({ journal: { path, signer }, workspace: WORKSPACE });
  try {
    return await answerHostEvent(engine, claudeCodeAdapter, bash(command), new Date().toISOString());
  } finally {
    await engine.close();
  }
}

type Body = {
  decision: string;
  reason_codes: string[];
  matched_rules: { id: string }[];
  parameters: Record<string, unknown>;
  parameters_defaults?: string;
  principal_id: string;
  tool_class: string;
  action: string;
  dare: unknown;
};

describe("hook decision entries journal the facts that were set, not the unset ones", () => {
  it("an ordinary command: the command and the set facts, no false or empty member, and the entry says so", async () => {
    const path = join(tempDir(), "journal.db");
    await oneShot(path, "npm test -- --shard 1");
    const [d] = await decisionsOf(path);
    const b = d?.body as Body;
    expect(b.parameters_defaults).toBe("omitted");
    expect(b.parameters.command).toBe("npm test -- --shard 1");
    expect(b.parameters.shellParsed).toBe(true);
    for (const v of Object.values(b.parameters)) expect(v === false || v === "").toBe(false);
    expect(b.decision).toBe("allow");
    expect(b.matched_rules.map((r) => r.id)).toEqual(["host-allow-shell"]);
    expect(b.reason_codes.length).toBeGreaterThan(0);
    expect(b.principal_id).toMatch(/^host:claude-code:/);
    expect([b.tool_class, b.action]).toEqual(["shell", "exec"]);
    expect(d?.run_id).toMatch(/^aarts:claude-code:/);
    const dare = PolicyDecisionRecordSchema.parse(b.dare);
    expect(dare.bundles.policy_bundle_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(dare.inputs.request_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(dare.inputs.context_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(dare.decision_id).toBe((b as unknown as { decision_id: string }).decision_id);
    expect(dare.subject.subject_id).toBe(b.principal_id);
  });

  it("a denied rm -rf / still names the fact and the rule that denied it, and nothing ran through", async () => {
    const path = join(tempDir(), "journal.db");
    const answer = await oneShot(path, "rm -rf /");
    expect(JSON.stringify(answer)).toContain("deny");
    const [d] = await decisionsOf(path);
    const b = d?.body as Body;
    expect(b.decision).toBe("deny");
    expect(b.parameters.destructive).toBe(true);
    expect(b.parameters.command).toBe("rm -rf /");
    expect(b.matched_rules.map((r) => r.id)).toContain("host-deny-rm-rf-root");
    const ocsf = toOcsf(d as JournalEntry) as unknown as Record<string, unknown>;
    expect(ocsf).toBeDefined();
    expect(JSON.stringify(ocsf)).toContain("host-deny-rm-rf-root");
  });
});
