// Principal state outlives the sidecar process (issue 17 #1): an agent quarantined in
// one sidecar is still quarantined, in a brand-new run, by a sidecar started again on the
// same configuration and files.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generateKeyPair, saveKeyPair } from "../../src/crypto/index.js";
import { hashToken, openSidecarRuntime, parseSidecarConfig } from "../../src/server/index.js";

const POLICY = `
rules:
  - { id: writes, name: writes, priority: 100, match: { toolClass: file, action: write }, decision: allow, reason: w }
`;

function sidecarConfig() {
  const dir = mkdtempSync(join(tmpdir(), "warden-restart-"));
  writeFileSync(join(dir, "policy.yaml"), POLICY);
  saveKeyPair(generateKeyPair("ed25519"), dir, { name: "journal" });
  return parseSidecarConfig(
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
}

const call = (runId: string, toolClass: string, action: string) => ({
  principalId: "agent-1",
  runId,
  toolClass,
  action,
  parameters: { path: "notes.txt" },
});

describe("sidecar restart", () => {
  it("an agent quarantined before a restart is still quarantined in a new run after it", async () => {
    const loaded = sidecarConfig();
    const first = await openSidecarRuntime(loaded);
    const run1 = await first.startRun("agent-1");
    expect((await first.gate.authorize(call(run1.runId, "file", "write"))).decision).toBe("allow");
    for (let i = 0; i < 2; i++) await first.gate.authorize(call(run1.runId, "shell", "exec"));
    expect(first.sessions.principals.quarantineOf("agent-1")).toBeDefined();
    await first.close();

    const second = await openSidecarRuntime(loaded);
    try {
      const run2 = await second.startRun("agent-1");
      expect(run2.runId).not.toBe(run1.runId);
      expect(second.sessions.run(run2.runId, "agent-1")).toBe(run2);
      const out = await second.gate.authorize(call(run2.runId, "file", "write"));
      expect(out.decision).toBe("deny");
      expect(out.reasonCodes).toContain("quarantined");
    } finally {
      await second.close();
    }
  });
});
