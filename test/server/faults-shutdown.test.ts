// Fail closed and shut down cleanly. A journal that cannot be written (another writer
// holds the segment journal's writers' lock past the busy timeout) and a policy engine that throws both answer 503 and
// execute nothing. Shutdown stops accepting, lets an in-flight execution finish,
// cancels an approval wait after the grace period, and leaves a verifiable journal.

import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { Keyring } from "../../src/crypto/index.js";
import { openEmbeddedStore, verifyJournal } from "../../src/journal/index.js";
import { echo, type Sidecar, startTestSidecar, TOKENS, until } from "./harness.js";

const code = (r: { body: Record<string, unknown> }) => (r.body.error as { code?: string } | undefined)?.code;

async function verifyFile(s: Sidecar) {
  const store = openEmbeddedStore(join(s.dir, "journal.db"), { readonly: true });
  try {
    const report = await verifyJournal(store, new Keyring([s.server.runtime.signer.publicKey]));
    const entries = await store.query({});
    return { report, entries };
  } finally {
    await store.close();
  }
}

describe("fail closed", () => {
  it("answers 503 ERR_SERVER_JOURNAL_UNAVAILABLE and runs nothing while the journal cannot be written", async () => {
    const s = await startTestSidecar();
    try {
      const ok = await s.call("/v1/execute", {
        token: TOKENS.agentA,
        body: { runId: await s.run("run-f"), tool: "slow_fetch", parameters: { ms: 0 } },
      });
      expect(ok.body.decision).toBe("allow");
      const hits = s.service.hits.length;

      // Another writer takes the segment journal's writers' lock and keeps it.
      const other = new Database(join(s.dir, "journal.db.segments", "lock"));
      other.exec("BEGIN EXCLUSIVE");
      try {
        const r = await s.call("/v1/execute", {
          token: TOKENS.agentA,
          body: { runId: await s.run("run-f"), tool: "slow_fetch", parameters: { ms: 0 } },
        });
        expect(r.status).toBe(503);
        expect(code(r)).toBe("ERR_SERVER_JOURNAL_UNAVAILABLE");
        expect(r.body.result).toBeUndefined();
        expect(s.service.hits.length).toBe(hits);
        const d = await s.call("/v1/decide", {
          token: TOKENS.agentA,
          body: echo("hi", { runId: await s.run("run-f") }),
        });
        expect(d.status).toBe(503);
        expect(code(d)).toBe("ERR_SERVER_JOURNAL_UNAVAILABLE");
      } finally {
        other.exec("ROLLBACK");
        other.close();
      }

      // The lock released, the sidecar works again and the chain is intact.
      const again = await s.call("/v1/execute", {
        token: TOKENS.agentA,
        body: { runId: await s.run("run-f"), tool: "slow_fetch", parameters: { ms: 0 } },
      });
      expect(again.body).toMatchObject({ decision: "allow", result: { ok: true } });
      expect(s.service.hits.length).toBe(hits + 1);
      const v = await s.call("/v1/journal/verify", { token: TOKENS.auditor, body: {} });
      expect(v.body.ok).toBe(true);
      const m = await s.call("/metrics", { token: TOKENS.auditor });
      expect(m.body.text).toMatch(/warden_faults_total\{fault="journal_unavailable"\} 2/);
    } finally {
      await s.stop();
    }
  });

  it("answers 503 ERR_SERVER_POLICY_ERROR and runs nothing when policy cannot be evaluated", async () => {
    const s = await startTestSidecar({
      overrides: {
        policy: {
          policyBundleHash: `sha256:${"ab".repeat(32)}`,
          evaluate() {
            throw new Error("policy engine crashed");
          },
        },
      },
    });
    try {
      const r = await s.call("/v1/execute", {
        token: TOKENS.agentA,
        body: { runId: await s.run("run-p"), tool: "slow_fetch", parameters: { ms: 0 } },
      });
      expect(r.status).toBe(503);
      expect(code(r)).toBe("ERR_SERVER_POLICY_ERROR");
      expect(s.service.hits).toHaveLength(0);
      // The denial itself is on record.
      const [rec] = await s.server.runtime.store.query({
        type: "warden.gate.decision",
        run_id: await s.run("run-p"),
      });
      expect(rec?.body).toMatchObject({ decision: "deny", reason_codes: ["policy_error"] });
    } finally {
      await s.stop();
    }
  });

  it("is not ready while the journal cannot be read", async () => {
    const s = await startTestSidecar();
    try {
      expect((await s.call("/ready")).status).toBe(200);
      await s.server.runtime.store.close();
      const r = await s.call("/ready");
      expect(r.status).toBe(503);
      expect(code(r)).toBe("ERR_SERVER_JOURNAL_UNAVAILABLE");
      expect((await s.call("/health")).status).toBe(200);
    } finally {
      await s.stop();
    }
  });
});

describe("graceful shutdown", () => {
  it("stops accepting, finishes the in-flight execution, then flushes and closes the journal", async () => {
    const s = await startTestSidecar();
    try {
      const arrived = s.service.nextHit();
      const inflight = s.call("/v1/execute", {
        token: TOKENS.agentA,
        body: { runId: await s.run("run-shutdown"), tool: "slow_fetch", parameters: { ms: 400 } },
      });
      await arrived;
      const lateRun = await s.run("run-late");
      const closing = s.server.close();
      await new Promise((r) => setImmediate(r));

      // A newcomer is not served: the port is closed (or, on a reused connection, 503).
      const late = await s
        .call("/v1/execute", { token: TOKENS.agentA, body: echo("late", { runId: lateRun }) })
        .catch((e: Error) => e);
      if (!(late instanceof Error)) {
        expect(late.status).toBe(503);
        expect(code(late)).toBe("ERR_SERVER_SHUTTING_DOWN");
      }

      const r = await inflight;
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ decision: "allow", result: { ok: true, output: { ok: true } } });
      await closing;

      // The journal was flushed (the result entry is there) and closed; it verifies.
      await expect(s.server.runtime.store.count()).rejects.toMatchObject({ code: "ERR_JOURNAL_CLOSED" });
      const { report, entries } = await verifyFile(s);
      expect(report.ok).toBe(true);
      const result = entries.find(
        (e) => e.type === "warden.gate.result" && e.body.decision_id === r.body.decisionId,
      );
      expect(result).toBeDefined();
      expect(entries.some((e) => e.run_id === lateRun)).toBe(false);
    } finally {
      await s.stop();
    }
  });

  it("cancels an approval wait after the grace period: the blocked call is denied, never run", async () => {
    const s = await startTestSidecar({ config: { shutdown: { graceMs: 300 } } });
    try {
      const inflight = s.call("/v1/execute", {
        token: TOKENS.agentA,
        body: { runId: await s.run("run-grace"), tool: "publish", parameters: { text: "never" } },
      });
      await until(() => (s.server.runtime.approvals.pending().length > 0 ? true : undefined));
      await s.server.close();
      const r = await inflight;
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ decision: "deny", approval: { outcome: "cancelled" } });
      expect(s.service.hits).toHaveLength(0);
      const { report, entries } = await verifyFile(s);
      expect(report.ok).toBe(true);
      expect(entries.find((e) => e.type === "warden.gate.resolution")?.body).toMatchObject({
        resolved: "deny",
        outcome: "cancelled",
      });
    } finally {
      await s.stop();
    }
  });
});
