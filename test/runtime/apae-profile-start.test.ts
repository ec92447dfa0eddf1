// The Regulated start check that every entry point gets from the runtime: tool contracts
// without provenance claims and consequential tools without a checkpoint before them stop
// the start (ERR_TRUST_PROFILE_UNMET); `warden run --config` runs the sidecar's whole check.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generateKeyPair, saveKeyPair } from "../../src/crypto/index.js";
import { composeRuntime, type RuntimeConfig } from "../../src/runtime/index.js";
import { signBehaviorSpec } from "../../src/trust/index.js";
import { runCli } from "../helpers/cli.js";

const CLAIMS = `
[apae]
data_source = "registry://whois"
data_classification = "public"
retention_days = 30
`;

const tool = (name: string, extra: string, apae: string) => `
[tool]
name = "${name}"
version = "1.0.0"
binary = "echo"
description = "test tool ${name}"
${extra}

[args.target]
position = 1
required = true
type = "string"
pattern = "^[a-z0-9.-]+$"
description = "target"

[command]
exec = ["echo", "{target}"]

[output]
format = "text"

[output.schema]
type = "object"
${apae}
`;

const POLICY = `
rules:
  - { id: shell, name: shell, priority: 100, match: { toolClass: shell }, decision: allow, reason: s }
`;

function deployment(
  files: Record<string, string>,
  apae: (dir: string) => NonNullable<RuntimeConfig["apae"]>,
) {
  const dir = mkdtempSync(join(tmpdir(), "warden-prof-start-"));
  const contracts = join(dir, "contracts");
  mkdirSync(contracts);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(contracts, `${name}.clad.toml`), text);
  writeFileSync(join(dir, "policy.yaml"), POLICY);
  const config: RuntimeConfig = {
    policy: [join(dir, "policy.yaml")],
    contracts: { dir: contracts },
    journal: { path: join(dir, "journal.db"), signer: generateKeyPair("ed25519") },
    gate: { principals: { "agent-1": { id: "agent-1", roles: ["agent"] } } },
    apae: apae(dir),
  };
  return { dir, contracts, config };
}

async function refusal(config: RuntimeConfig): Promise<string> {
  try {
    const rt = await composeRuntime(config);
    await rt.close();
  } catch (err) {
    expect(err).toMatchObject({ code: "ERR_TRUST_PROFILE_UNMET" });
    return (err as Error).message;
  }
  return expect.unreachable("a regulated runtime started with a gap");
}

function checkpointSpec(dir: string, guarded: string[]) {
  const operator = generateKeyPair("ed25519");
  const key = saveKeyPair(operator, dir, { name: "operator" });
  const spec = signBehaviorSpec(
    {
      spec_version: "1",
      agent_id: "agent-1",
      allowed_actions: ["payout", "lookup"],
      constraints: { require_checkpoint_before: guarded },
      verification_frequency: "continuous",
    },
    operator,
  );
  writeFileSync(join(dir, "spec.json"), JSON.stringify(spec));
  return { keys: [key.publicPem], specs: [join(dir, "spec.json")] };
}

describe("a Regulated runtime checks its contracts at start", () => {
  it("refuses a contract without provenance claims, naming it", async () => {
    const d = deployment({ lookup: tool("lookup", "", ""), other: tool("other", "", CLAIMS) }, () => ({
      profile: "regulated",
    }));
    const m = await refusal(d.config);
    expect(m).toMatch(/provenance_claims \(contracts without \[apae\] provenance claims: lookup\)/);
    expect(m).not.toMatch(/other/);
  });

  it("refuses a consequential tool that no checkpoint guards", async () => {
    const files = {
      payout: tool("payout", 'risk_tier = "critical"', CLAIMS),
      lookup: tool("lookup", "", CLAIMS),
    };
    // No spec asks for a checkpoint before payout.
    const bare = deployment(files, () => ({ profile: "regulated" }));
    expect(await refusal(bare.config)).toMatch(/checkpoint_before_consequential.*payout/);
    // A spec asks for one, but no tool is a checkpoint.
    const noTool = deployment(files, (dir) => ({
      profile: "regulated",
      behavior: checkpointSpec(dir, ["payout"]),
    }));
    expect(await refusal(noTool.config)).toMatch(/checkpoint_before_consequential.*payout/);
  });

  it("starts when every contract has claims and a checkpoint tool guards the consequential one", async () => {
    const files = {
      payout: tool("payout", 'risk_tier = "critical"', CLAIMS),
      lookup: tool("lookup", "", CLAIMS),
      save_state: tool("save_state", "", `${CLAIMS}checkpoint = true\n`),
    };
    const d = deployment(files, (dir) => ({
      profile: "regulated",
      behavior: checkpointSpec(dir, ["payout"]),
    }));
    const rt = await composeRuntime(d.config);
    expect(rt.apae?.ects.level).toBe("L3");
    await rt.close();
  });

  it("a Standard runtime starts with the same gaps (they are recommended there, not refused)", async () => {
    const d = deployment({ lookup: tool("lookup", 'risk_tier = "high"', "") }, () => ({
      profile: "standard",
    }));
    const rt = await composeRuntime(d.config);
    await rt.close();
  });
});

describe("warden run --config runs the sidecar's start check", () => {
  it("refuses a Regulated apae section with ERR_TRUST_PROFILE_UNMET and exit 2, before any turn", async () => {
    const d = deployment({ lookup: tool("lookup", "", CLAIMS) }, () => ({}));
    writeFileSync(
      join(d.dir, "gate.yaml"),
      "principals:\n  - { id: agent-1, roles: [agent] }\napae:\n  profile: regulated\n",
    );
    writeFileSync(join(d.dir, "script.yaml"), "turns:\n  - text: done\n");
    const r = await runCli(
      "run",
      "--contracts",
      d.contracts,
      "--policy",
      join(d.dir, "policy.yaml"),
      "--config",
      join(d.dir, "gate.yaml"),
      "--principal",
      "agent-1",
      "--db",
      join(d.dir, "run.db"),
      "--script",
      join(d.dir, "script.yaml"),
      "a task",
    );
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/ERR_TRUST_PROFILE_UNMET/);
    expect(r.err).toMatch(/ect_level/);
    expect(r.err).toMatch(/hitl_gates/);
    expect(r.out).not.toMatch(/answer/);
  });

  it("runs a Standard apae section", async () => {
    const d = deployment({ lookup: tool("lookup", "", CLAIMS) }, () => ({}));
    writeFileSync(
      join(d.dir, "gate.yaml"),
      "principals:\n  - { id: agent-1, roles: [agent] }\napae:\n  profile: standard\n",
    );
    writeFileSync(join(d.dir, "script.yaml"), "turns:\n  - text: done\n");
    const r = await runCli(
      "run",
      "--contracts",
      d.contracts,
      "--policy",
      join(d.dir, "policy.yaml"),
      "--config",
      join(d.dir, "gate.yaml"),
      "--principal",
      "agent-1",
      "--db",
      join(d.dir, "run.db"),
      "--script",
      join(d.dir, "script.yaml"),
      "a task",
    );
    expect(r.code).toBe(0);
  });
});
