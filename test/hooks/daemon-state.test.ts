// The daemon's one in-memory state against a state file other processes write (a one-shot
// `warden hooks claude-code` beside the daemon): in process, with the writes placed between
// the steps of an event in flight, so the interleaving is the test's, not the scheduler's.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EnginePool } from "../../src/hooks/daemon-engines.js";
import { DAEMON_HOSTS } from "../../src/hooks/daemon-hosts.js";
import { emptyState, saveState } from "../../src/hooks/state.js";
import { bashEvent, exfiltration, poisonedResult } from "./daemon-helpers.js";
import { tempDir } from "./helpers.js";

const host = DAEMON_HOSTS["claude-code"];
if (host === undefined) throw new Error("claude-code is a daemon host");

/** Another process's save: one session of its own, merged into the file under the lock. */
function otherWriter(path: string, session: string): void {
  const s = emptyState();
  s.sessions[session] = {
    runId: `run-${session}`,
    startedAt: new Date().toISOString(),
    ended: false,
    epoch: 0,
    taint: [],
    poisoned: [`written by another process for ${session}`],
    denials: [],
    counts: {},
  };
  saveState(path, s);
}

const tick = () => new Promise((r) => setImmediate(r));

describe("the daemon's state beside other writers", () => {
  it("a poisoning still in flight survives another process writing the state file meanwhile", async () => {
    const dir = tempDir();
    const statePath = join(dir, "state.json");
    const pool = EnginePool.open({ statePath, configFor: () => ({ journal: { path: ":memory:" } }) });
    try {
      await pool.answer(host, undefined, JSON.stringify(bashEvent("ls", "warm-up")));
      // A: the poisoned result of a new session, in flight while the file changes twice.
      const a = pool.answer(host, undefined, JSON.stringify(poisonedResult("in-flight")));
      otherWriter(statePath, "one-shot-1");
      await tick();
      otherWriter(statePath, "one-shot-2");
      // B: another event refreshes from the changed file while A is still being answered.
      const b = pool.answer(host, undefined, JSON.stringify(bashEvent("npm test", "other")));
      await Promise.all([a, b]);
      const state = JSON.parse(readFileSync(statePath, "utf8")) as {
        sessions: Record<string, { poisoned: string[] }>;
      };
      for (const s of ["in-flight", "one-shot-1", "one-shot-2"])
        expect(state.sessions[s]?.poisoned.length, s).toBeGreaterThan(0);
      // And the daemon itself still denies the poisoned session's exfiltration.
      const exfil = await pool.answer(host, undefined, JSON.stringify(exfiltration("in-flight")));
      expect(exfil.stdout).toContain('"permissionDecision":"deny"');
      const other = await pool.answer(host, undefined, JSON.stringify(exfiltration("one-shot-2")));
      expect(other.stdout).toContain('"permissionDecision":"deny"');
    } finally {
      await pool.close();
    }
  }, 60_000);
});
