// `unknownEgress: "ask"` really asks (docs/hooks-containment.md "Egress"): a Bash call whose
// command names a host off the allowlist is answered with Claude Code's ask carrying the
// CONTAINED command (updatedInput), whose spec lets exactly that host through — approved,
// Claude Code runs the sandboxed command, never the original. A host that cannot show the
// rewritten input with its ask is denied. Hosts on the list, and the sandbox's own
// loopback, are not asked.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeSpec } from "../../src/hooks/contain-spec.js";
import { answerHostEvent, claudeCodeAdapter, createEngine, type Engine } from "../../src/hooks/index.js";
import { bashPayload, type Harness, harness } from "./contain-harness.js";

let h: Harness;
let engine: Engine;
let dir: string;
beforeAll(async () => {
  h = await harness();
  dir = mkdtempSync(join(tmpdir(), "warden-egress-ask-"));
  engine = await createEngine({
    workspace: h.ws,
    statePath: join(dir, "state.json"),
    profile: { egress: [`127.0.0.1:${h.okPort}`], unknownEgress: "ask" },
  });
  await engine.versionCheck({ aarts_version: "1" });
});
afterAll(async () => {
  await engine?.close();
  rmSync(dir, { recursive: true, force: true });
  await h?.close();
});

async function pre(command: string) {
  const answer = await answerHostEvent(
    engine,
    claudeCodeAdapter,
    bashPayload(h, command, "egress-ask"),
    new Date().toISOString(),
  );
  return (
    (JSON.parse(answer.stdout || "{}") as { hookSpecificOutput?: Record<string, unknown> })
      .hookSpecificOutput ?? {}
  );
}

const specOf = (command: string) => {
  const words = command.split("; ")[0]?.split(" ") ?? [];
  const spec = decodeSpec((words[2] ?? "").slice(1, -1));
  if (typeof spec === "string") throw new Error(spec);
  return spec;
};

describe('unknownEgress "ask"', { timeout: 60_000 }, () => {
  it("curl https://api.example.test is asked, with the contained command (that host let through) as updatedInput", async () => {
    const out = await pre("curl -s https://api.example.test/v1/status");
    expect(out.permissionDecision).toBe("ask");
    expect(String(out.permissionDecisionReason)).toContain("api.example.test");
    const command = (out.updatedInput as { command?: string } | undefined)?.command ?? "";
    expect(command).toContain("contain-run.js");
    expect(command).not.toContain("curl -s https");
    expect(specOf(command).egress).toContain("api.example.test");
  });

  it("hosts on the list and the sandbox's own loopback are not asked (allowed, contained)", async () => {
    for (const cmd of [`curl -s http://localhost:3000/health`, "npm install left-pad", "npm test"]) {
      const out = await pre(cmd);
      expect(out.permissionDecision, cmd).toBe("allow");
      expect(String((out.updatedInput as { command?: string }).command)).toContain("contain-run.js");
    }
  });

  it("a host that cannot show the rewritten input with its ask (Cursor) is denied instead", async () => {
    const cursor = {
      conversation_id: "c-egress",
      generation_id: "g-egress",
      hook_event_name: "beforeShellExecution",
      workspace_roots: [h.ws],
      command: "curl -s https://api.example.test/v1/status",
      cwd: h.ws,
    };
    const { cursorAdapter } = await import("../../src/hooks/index.js");
    const answer = await answerHostEvent(engine, cursorAdapter, cursor, new Date().toISOString());
    expect(answer.stdout ?? "").not.toContain('"permission":"allow"');
  });
});
