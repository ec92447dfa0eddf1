// The Gate's quarantine of a hook session (its denial threshold, a behavioural rule) belongs to
// that session's principal: it follows the session across processes and restarts, never locks
// the host's other sessions out (the lock-out the issue reports), and a human lifts it with
// `warden hooks clear` — never the agent.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { journalKey } from "../../src/cli/runtime.js";
import { answerHostEvent, claudeCodeAdapter, createEngine, type Engine } from "../../src/hooks/index.js";
import { runCli } from "../helpers/cli.js";
import { decisionOf, pre, workspace } from "./claude-payloads.js";
import { tempDir } from "./helpers.js";

const A = "7c0e5a2b-1f3d-4b6a-8e9c-0d1f2a3b4c5d";
const B = "9e8d7c6b-5a4f-4e3d-2c1b-0a9f8e7d6c5b";

async function engineIn(dir: string, ws: string): Promise<Engine> {
  const db = join(dir, "journal.db");
  return createEngine({
    workspace: ws,
    journal: { path: db, signer: journalKey(db, undefined).pair },
    statePath: join(dir, "state.json"),
  });
}

const ask = async (e: Engine, p: Record<string, unknown>) =>
  decisionOf(await answerHostEvent(e, claudeCodeAdapter, p, new Date().toISOString()));

describe("a hook session's quarantine", () => {
  it("quarantines only the session that hit the denial threshold; another session keeps working", async () => {
    const dir = tempDir();
    const ws = workspace();
    const e = await engineIn(dir, ws);
    try {
      for (let i = 0; i < 6; i++)
        expect(await ask(e, pre(ws, "Bash", { command: "rm -rf /" }, A))).toBe("deny");
      // A file write (not one of the few actions a quarantine still permits) is refused.
      const edit = { file_path: join(ws, "notes.md"), content: "x\n" };
      expect(await ask(e, pre(ws, "Write", edit, A))).toBe("deny");
      expect(await ask(e, pre(ws, "Write", edit, B))).toBe("allow");
    } finally {
      await e.close();
    }
  });

  it("survives a restart, and only warden hooks clear (journaled) lifts it", async () => {
    const dir = tempDir();
    const ws = workspace();
    const edit = { file_path: join(ws, "notes.md"), content: "x\n" };
    let e = await engineIn(dir, ws);
    for (let i = 0; i < 6; i++) await ask(e, pre(ws, "Bash", { command: "rm -rf /" }, A));
    await e.close();
    e = await engineIn(dir, ws);
    expect(await ask(e, pre(ws, "Write", edit, A))).toBe("deny");
    await e.close();
    const cleared = await runCli("hooks", "clear", "--dir", dir, "--session", A, "--yes");
    expect(cleared.code, cleared.err).toBe(0);
    expect(cleared.out).toContain("lifted the session's quarantine");
    e = await engineIn(dir, ws);
    try {
      expect(await ask(e, pre(ws, "Write", edit, A))).toBe("allow");
    } finally {
      await e.close();
    }
  });
});
