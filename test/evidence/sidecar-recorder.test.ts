// The sidecar records for replay too: its bundle (policies, contracts, its `gate:` section
// as gate.json, the trust section) is pinned at start, and a run it decided replays
// identical through the CLI's replay host — quarantine included.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliReplayHost } from "../../src/cli/replay-host.js";
import { generateKeyPair, saveKeyPair } from "../../src/crypto/index.js";
import { EVIDENCE_BUNDLE_EVENT, replayRuns } from "../../src/evidence/index.js";
import { hashToken, openSidecarRuntime, parseSidecarConfig } from "../../src/server/index.js";

const POLICY = `
rules:
  - { id: writes, name: writes, priority: 100, match: { toolClass: file, action: write }, decision: allow, reason: w }
`;

describe("sidecar replay recorder", () => {
  it("pins the sidecar's bundle and a sidecar run replays identical, quarantine included", async () => {
    const dir = mkdtempSync(join(tmpdir(), "warden-sc-rec-"));
    writeFileSync(join(dir, "policy.yaml"), POLICY);
    saveKeyPair(generateKeyPair("ed25519"), dir, { name: "journal" });
    const loaded = parseSidecarConfig(
      {
        policies: ["policy.yaml"],
        journal: { path: "journal.db", key: "journal.pem" },
        gate: {
          principals: [{ id: "agent-1", roles: ["agent"] }],
          requireContract: false,
          context: { quarantine: { denialThreshold: 2 } },
        },
        auth: { principals: [{ id: "agent-1", tokenSha256: hashToken("token-agent-1-0123456789") }] },
      },
      dir,
    );
    const rt = await openSidecarRuntime(loaded);
    const run = await rt.startRun("agent-1");
    const call = (toolClass: string, action: string) => ({
      principalId: "agent-1",
      runId: run.runId,
      toolClass,
      action,
      parameters: { path: "notes.txt" },
    });
    try {
      expect((await rt.gate.evaluate(call("file", "write"))).decision).toBe("allow");
      for (let i = 0; i < 2; i++) await rt.gate.evaluate(call("shell", "exec"));
      expect((await rt.gate.evaluate(call("file", "write"))).reasonCodes).toContain("quarantined");
      const pinned = await rt.store.query({ type: EVIDENCE_BUNDLE_EVENT });
      expect(pinned).toHaveLength(1);
    } finally {
      await rt.close();
    }
    const [r] = await replayRuns({
      db: join(dir, "journal.db"),
      keys: [join(dir, "journal.pub.pem")],
      run: run.runId,
      host: cliReplayHost,
    });
    expect(r!.steps.map((s) => s.recorded.decision)).toEqual(["allow", "deny", "deny", "deny"]);
    expect(r!.counts).toEqual({ identical: 4, diverged: 0, failed: 0 });
  });
});
