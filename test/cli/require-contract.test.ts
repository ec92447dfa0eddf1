// requireContract defaults to true for `warden run` / `warden exec` as in the sidecar: a
// --config that does not mention it still has the Gate deny calls naming no contract
// (`contract_required`); `requireContract: false` in the file is the documented opt-out.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openRuntime } from "../../src/cli/runtime.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const POLICY = `name: reads
version: "1.0"
rules:
  - id: allow-reads
    name: file reads are fine
    priority: 100
    match: { toolClass: file, action: read }
    decision: allow
    reason: reads
`;

/** Decides one contract-less file read through the run/exec runtime with `config` as --config. */
async function contractlessRead(
  config: string,
): Promise<{ decision: string; reasonCodes: readonly string[] }> {
  const dir = mkdtempSync(join(tmpdir(), "warden-reqc-"));
  dirs.push(dir);
  mkdirSync(join(dir, "contracts"));
  writeFileSync(join(dir, "policy.yaml"), POLICY);
  writeFileSync(join(dir, "gate.yaml"), config);
  const rt = await openRuntime({
    contracts: join(dir, "contracts"),
    policy: [join(dir, "policy.yaml")],
    config: join(dir, "gate.yaml"),
    principal: "agent-1",
    db: join(dir, "journal.db"),
    sandbox: dir,
  });
  try {
    const o = await rt.gate.authorize({
      principalId: "agent-1",
      runId: "run-1",
      toolClass: "file",
      action: "read",
      parameters: { path: "notes.txt" },
    });
    return { decision: o.decision, reasonCodes: o.reasonCodes };
  } finally {
    await rt.close();
  }
}

describe("warden run / exec: requireContract", () => {
  it("a call to a tool with no contract is refused by default, even with a --config that does not mention it", async () => {
    const r = await contractlessRead("principals: [{ id: agent-1, roles: [agent] }]\n");
    expect(r).toEqual({ decision: "deny", reasonCodes: ["contract_required"] });
  });

  it("requireContract: false in the configuration is the opt-out (the policy then decides)", async () => {
    const r = await contractlessRead(
      "principals: [{ id: agent-1, roles: [agent] }]\nrequireContract: false\n",
    );
    expect(r.decision).toBe("allow");
  });

  it("refuses a configuration the Gate's schema refuses (ERR_GATE_CONFIG_INVALID)", async () => {
    await expect(contractlessRead("requireContract: maybe\n")).rejects.toMatchObject({
      code: "ERR_GATE_CONFIG_INVALID",
    });
  });
});
