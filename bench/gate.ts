// The whole Gate pipeline per decision — parse, principal, session context (taint,
// provenance, budgets, behavioural rules), 100 YAML rules, DARE record, journal commit —
// beside a same-run baseline: the policy bundle's evaluate alone on the same request.
// The journal is SQLite on a temp file with WAL and synchronous=FULL, so each decision
// pays for a durable commit (group commit across concurrent decisions).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createSessionStore } from "../src/context/index.js";
import { GateRequest } from "../src/contracts/index.js";
import { generateKeyPair } from "../src/crypto/index.js";
import { Gate } from "../src/gate/index.js";
import { openJournal, SqliteJournalStore } from "../src/journal/index.js";
import { loadPolicyBundle } from "../src/policy/index.js";
import { measure, summarize, table } from "./_stats.js";

const rules = ["name: bench", "rules:"];
for (let i = 0; i < 99; i++) {
  rules.push(
    `  - {id: r${i}, name: r${i}, priority: ${100 + i}, match: {toolClass: shell, parameters: {command: {pattern: "^cmd${i} "}}}, decision: deny, reason: r}`,
  );
}
rules.push(
  '  - {id: allow-api, name: api, priority: 800, match: {toolClass: http, action: get, parameters: {url: {pattern: "^https://api\\\\.example\\\\.com/"}}}, decision: allow, reason: r}',
);
const policy = loadPolicyBundle({ yaml: [{ name: "bench.yaml", text: `${rules.join("\n")}\n` }] });
const raw = (i: number) => ({
  principalId: "agent-1",
  runId: `run-${i % 64}`,
  toolClass: "http",
  action: "get",
  parameters: { url: `https://api.example.com/v1/items?page=${i}` },
});

const dir = mkdtempSync(join(tmpdir(), "warden-bench-gate-"));
try {
  const key = generateKeyPair("ed25519");
  const journal = await openJournal({ store: SqliteJournalStore.open(join(dir, "j.db")), signer: key });
  const gate = new Gate({
    policy,
    journal,
    signer: key,
    principals: { "agent-1": { id: "agent-1", roles: ["agent"] } },
    sessions: createSessionStore({ budgets: {} }),
  });

  const N = 5000;
  const facts = createSessionStore({}).open({ runId: "x", principalId: "agent-1" }).snapshot();
  const parsed = GateRequest.parse(raw(0));
  const baseline = measure("baseline: policy bundle evaluate (100 rules)", 20_000, () =>
    policy.evaluate({
      request: parsed,
      principal: { id: "agent-1", roles: ["agent"] },
      taint: [],
      session: facts,
    }),
  );

  // Sequential: each decision waits for its own durable commit.
  const seq = new Float64Array(1000);
  let t0 = performance.now();
  for (let i = 0; i < seq.length; i++) {
    const s = performance.now();
    await gate.evaluate(raw(i));
    seq[i] = (performance.now() - s) * 1000;
  }
  const sequential = summarize("gate.evaluate, one at a time (fsync each)", seq, performance.now() - t0);

  // Concurrent: 64 runs in flight share commits.
  const lat = new Float64Array(N);
  t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < N) {
        const i = next++;
        const s = performance.now();
        await gate.evaluate(raw(i));
        lat[i] = (performance.now() - s) * 1000;
      }
    }),
  );
  const concurrent = summarize("gate.evaluate, 64 in flight (group commit)", lat, performance.now() - t0);

  process.stdout.write(table([baseline, sequential, concurrent], baseline));
  process.stdout.write(
    "\nThe Gate's own target (p50 <= 10 us at 100 rules) is for the decision excluding the journal write: see the policy bench.\n",
  );
  await journal.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
