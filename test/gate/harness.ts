// A real Gate for tests: YAML/Cedar policy bundle, SQLite journal in a temp dir,
// session context, optional tool contracts and approvals.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ContextConfigInput } from "../../src/context/index.js";
import { createSessionStore } from "../../src/context/index.js";
import { generateKeyPair, Keyring } from "../../src/crypto/index.js";
import { Gate, type GateOptions, InProcessApprovals, type PrincipalConfig } from "../../src/gate/index.js";
import { openJournal, SqliteJournalStore, verifyJournal } from "../../src/journal/index.js";
import { loadPolicyBundle } from "../../src/policy/index.js";

export interface Harness {
  gate: Gate;
  approvals: InProcessApprovals;
  store: SqliteJournalStore;
  verify(): Promise<Awaited<ReturnType<typeof verifyJournal>>>;
  entries(): Promise<{ seq: number; type: string; body: Record<string, unknown> }[]>;
}

export interface HarnessOptions {
  yaml?: string;
  cedar?: string;
  principals?: PrincipalConfig[];
  context?: ContextConfigInput;
  gate?: Partial<GateOptions>;
}

export const AGENT: PrincipalConfig = { id: "agent-1", roles: ["agent"] };

export async function makeGate(o: HarnessOptions = {}): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), "warden-gate-"));
  const key = generateKeyPair("ed25519");
  const store = SqliteJournalStore.open(join(dir, "journal.db"));
  const journal = await openJournal({ store, signer: key });
  const policy = loadPolicyBundle({
    ...(o.yaml !== undefined ? { yaml: [{ name: "test.yaml", text: o.yaml }] } : {}),
    ...(o.cedar !== undefined ? { cedar: [{ name: "test.cedar", text: o.cedar }] } : {}),
  });
  const approvals = new InProcessApprovals();
  const principals = Object.fromEntries((o.principals ?? [AGENT]).map((p) => [p.id, p]));
  const gate = new Gate({
    policy,
    journal,
    signer: key,
    principals,
    approvals,
    sessions: createSessionStore(o.context ?? {}),
    ...o.gate,
  });
  return {
    gate,
    approvals,
    store,
    verify: () => verifyJournal(store, new Keyring([key.publicKey])),
    async entries() {
      const out: { seq: number; type: string; body: Record<string, unknown> }[] = [];
      for await (const e of store.entries()) {
        if ("seq" in e && "body" in e) out.push({ seq: e.seq, type: e.type, body: e.body });
      }
      return out;
    },
  };
}

export const req = (over: Record<string, unknown> = {}) => ({
  principalId: "agent-1",
  runId: "run-1",
  toolClass: "http",
  action: "get",
  parameters: { url: "https://example.org/" },
  ...over,
});
