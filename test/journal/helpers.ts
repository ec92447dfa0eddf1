// Shared set-up for journal tests: temp directories, keys, sample bodies.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  buildPolicyDecision,
  type Decision,
  dareOutcome,
  type GateDecisionBody,
  newTraceId,
  sha256Of,
  uuidv7,
} from "../../src/contracts/index.js";
import { generateKeyPair, type KeyPair, Keyring } from "../../src/crypto/index.js";
import {
  type JournalEntry,
  type JournalStore,
  openJournal,
  SqliteJournalStore,
} from "../../src/journal/index.js";

export function tempDir(prefix = "warden-journal-"): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export const KEY: KeyPair = generateKeyPair("ed25519");
export const OTHER_KEY: KeyPair = generateKeyPair("ed25519");
export const keyringOf = (...pairs: KeyPair[]) => new Keyring(pairs.map((p) => p.publicKey));

export const RUN = uuidv7();
export const TRACE = newTraceId();

export function policyDecision(decision: "allow" | "deny" = "allow") {
  return buildPolicyDecision({
    run_id: RUN,
    trace_id: TRACE,
    tenant_id: "tenant-1",
    environment: "test",
    subject: {
      agent_instance_id: "spiffe://org/agent/planner#r1",
      subject_id: "spiffe://org/agent/planner",
      attested: true,
    },
    action: { type: "tool.invoke", tool_name: "crm.update_contact", tool_category: "reversible_write" },
    inputs: { request_hash: sha256Of({ r: 1 }) },
    bundles: { policy_bundle_hash: sha256Of({ p: 1 }), tool_schema_hash: sha256Of({ t: 1 }) },
    result: { decision, reason_codes: ["ALLOWLIST_MATCH"], obligations: [] },
  });
}

/** A valid warden.gate.decision body (GateDecisionBody): the detail and its DARE record agree. */
export function gateDecision(decision: Decision = "allow"): GateDecisionBody {
  const request_hash = sha256Of({ r: 1 });
  const context_hash = sha256Of({ c: 1 });
  const policy_bundle_hash = sha256Of({ p: 1 });
  const dare = buildPolicyDecision({
    run_id: RUN,
    trace_id: TRACE,
    tenant_id: "tenant-1",
    environment: "test",
    subject: {
      agent_instance_id: "spiffe://org/agent/planner#r1",
      subject_id: "spiffe://org/agent/planner",
      attested: true,
    },
    action: { type: "tool.invoke", tool_name: "crm.update_contact", tool_category: "reversible_write" },
    inputs: { request_hash, context_hash },
    bundles: { policy_bundle_hash, tool_schema_hash: sha256Of({ t: 1 }) },
    result: { decision: dareOutcome(decision), reason_codes: ["ALLOWLIST_MATCH"], obligations: [] },
  });
  return {
    decision_id: dare.decision_id,
    decision,
    reason_codes: ["ALLOWLIST_MATCH"],
    matched_rules: [],
    obligations: [],
    principal_id: "spiffe://org/agent/planner",
    tool_class: "reversible_write",
    action: "update_contact",
    parameters: { id: "c-1" },
    taint: [],
    provenance: [],
    request_hash,
    context_hash,
    policy_bundle_hash,
    dare,
  };
}

/** A SQLite journal in a temp dir with `n` entries of mixed types. */
export async function filledJournal(n: number, key: KeyPair = KEY) {
  const t = tempDir();
  const store = SqliteJournalStore.open(join(t.dir, "journal.db"));
  const journal = await openJournal({ store, signer: key });
  const entries: JournalEntry[] = [];
  for (let i = 0; i < n; i++) {
    entries.push(
      await journal.append(
        i % 3 === 0
          ? {
              type: "dare.policy.decision",
              run_id: RUN,
              trace_id: TRACE,
              body: policyDecision(i % 2 ? "deny" : "allow"),
            }
          : { type: "ObservationsCollected", run_id: RUN, trace_id: TRACE, body: { observation_count: i } },
      ),
    );
  }
  return {
    dir: t.dir,
    path: join(t.dir, "journal.db"),
    store,
    journal,
    entries,
    cleanup: async () => {
      await store.close();
      t.cleanup();
    },
  };
}

export async function collect(store: JournalStore): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const e of store.entries()) out.push(e);
  return out;
}
