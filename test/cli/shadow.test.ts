// Shadow mode end to end, as an operator meets it: a sidecar deployed from a YAML config with
// a `shadow:` bundle, traffic over HTTP, `warden shadow report`, `warden shadow promote`, and
// the restarted sidecar enforcing what was the shadow. The call the shadow would have denied
// runs while in shadow (the echo's output comes back) and is refused after promotion (the
// tool never runs: no output). Attacks on promotion: a tampered report, a report over
// another bundle — refused, the config left as it was.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPair, saveKeyPair } from "../../src/crypto/index.js";
import {
  hashToken,
  loadSidecarConfig,
  openSidecarRuntime,
  type SidecarServer,
  startSidecar,
} from "../../src/server/index.js";
import { runCli } from "../helpers/cli.js";

const TOKEN = "token-agent-shadow-0123456789";
const rule = (id: string, extra: string) => `  - id: ${id}
    name: ${id}
${extra}`;
const ENFORCING = `name: enforcing
version: "1"
rules:
${rule("allow-echo", "    priority: 200\n    match: { toolClass: shell, action: exec }\n    decision: allow\n    reason: harmless")}
`;
const SHADOW = `name: candidate
version: "1"
rules:
${rule("deny-secret-echo", '    priority: 100\n    match: { toolClass: shell, action: exec, parameters: { msg: { pattern: "^secret" } } }\n    decision: deny\n    reason: no secrets on the shell')}
${rule("allow-echo", "    priority: 200\n    match: { toolClass: shell, action: exec }\n    decision: allow\n    reason: harmless")}
`;
const ECHO = `[tool]
name = "echo_tool"
version = "1.0.0"
description = "Echo a message"
[args.msg]
type = "string"
required = true
position = 1
[apae]
data_source = "test://echo_tool"
data_classification = "internal"
retention_days = 30
[command]
exec = ["echo", "{msg}"]
[output]
format = "text"
schema = { type = "object", required = ["raw_output"] }
`;

let dir: string;
let config: string;
let server: SidecarServer | undefined;

async function start(): Promise<string> {
  const rt = await openSidecarRuntime(loadSidecarConfig(config), {});
  server = await startSidecar(rt);
  return server.url as string;
}

async function execute(url: string, msg: string): Promise<Record<string, unknown>> {
  const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
  const run = (await (
    await fetch(`${url}/v1/runs`, { method: "POST", headers: auth, body: "{}" })
  ).json()) as {
    runId: string;
  };
  const body = {
    runId: run.runId,
    toolClass: "shell",
    action: "exec",
    tool: "echo_tool",
    parameters: { msg },
  };
  const res = await fetch(`${url}/v1/execute`, { method: "POST", headers: auth, body: JSON.stringify(body) });
  return (await res.json()) as Record<string, unknown>;
}

const promote = (report: string, by: string) =>
  runCli("shadow", "promote", "--config", config, "--report", report, "--by", by);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "warden-shadow-e2e-"));
  const key = saveKeyPair(generateKeyPair("ed25519"), dir, { name: "journal" });
  writeFileSync(join(dir, "policy.yaml"), ENFORCING);
  writeFileSync(join(dir, "candidate.yaml"), SHADOW);
  mkdirSync(join(dir, "contracts"));
  writeFileSync(join(dir, "contracts", "echo_tool.clad.toml"), ECHO);
  mkdirSync(join(dir, "work"));
  config = join(dir, "sidecar.yaml");
  writeFileSync(
    config,
    `# the operator's sidecar
host: 127.0.0.1
port: 0
policies: [policy.yaml]
shadow:
  policies: [candidate.yaml] # tried on live traffic first
contracts: contracts
journal: { path: journal.db, key: ${JSON.stringify(key.privatePem)} }
gate:
  principals: [{ id: agent-a, roles: [agent] }]
auth:
  principals: [{ id: agent-a, tokenSha256: "${hashToken(TOKEN)}" }]
  approvers: []
executors: { process: { workDir: work } }
`,
  );
});

afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("shadow mode end to end (sidecar, report, promote)", () => {
  it("in shadow, the call the candidate would deny still runs; the report names the rule, tool and example", async () => {
    const url = await start();
    const shadowed = await execute(url, "secret-token-1");
    expect(shadowed.decision).toBe("allow");
    expect(JSON.stringify(shadowed)).toContain("secret-token-1");
    expect((await execute(url, "hello")).decision).toBe("allow");
    await server?.close();
    server = undefined;
    const r = await runCli("shadow", "report", "--journal", join(dir, "journal.db"), "--json");
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out) as Record<string, unknown>;
    expect(report).toMatchObject({ decisions: 2, diffs: 1, dropped: 0 });
    expect(report.groups).toEqual([
      expect.objectContaining({
        change: "allow→deny",
        shadow_rules: ["deny-secret-echo"],
        tool: "echo_tool",
        count: 1,
        examples: [expect.objectContaining({ parameters: { msg: "secret-token-1" } })],
      }),
    ]);
    writeFileSync(join(dir, "report.json"), r.out);
    const text = await runCli("shadow", "report", "--journal", join(dir, "journal.db"));
    expect(text.out).toContain("1 of 2 decisions would change");
  });

  it("promotion refuses a tampered report and leaves the config as it was", async () => {
    const before = readFileSync(config, "utf8");
    const report = JSON.parse(readFileSync(join(dir, "report.json"), "utf8")) as Record<string, unknown>;
    writeFileSync(join(dir, "tampered.json"), JSON.stringify({ ...report, diffs: 0 }));
    const r = await promote(join(dir, "tampered.json"), "mallory");
    expect(r.code).not.toBe(0);
    expect(r.err).toContain("sha256");
    expect(readFileSync(config, "utf8")).toBe(before);
  });

  it("promotion refuses a report made over another shadow bundle", async () => {
    const before = readFileSync(config, "utf8");
    writeFileSync(join(dir, "candidate.yaml"), SHADOW.replace("^secret", "^token"));
    const r = await promote(join(dir, "report.json"), "alice");
    expect(r.code).not.toBe(0);
    expect(r.err).toContain("not a report over the configured shadow bundle");
    expect(readFileSync(config, "utf8")).toBe(before);
    writeFileSync(join(dir, "candidate.yaml"), SHADOW);
  });

  it("promote records who and which report, rewrites the config, and the restarted sidecar enforces it", async () => {
    const r = await promote(join(dir, "report.json"), "alice");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain(`wrote ${config}`);
    const rewritten = readFileSync(config, "utf8");
    expect(rewritten).toContain("# the operator's sidecar");
    expect(rewritten).not.toContain("shadow:");
    expect(loadSidecarConfig(config).config.policies).toEqual([join(dir, "candidate.yaml")]);
    const report = JSON.parse(readFileSync(join(dir, "report.json"), "utf8")) as { sha256: string };
    const exported = await runCli("journal", "export", "--db", join(dir, "journal.db"), "--format", "jsonl");
    const promoted = exported.out
      .split("\n")
      .filter((l) => l.includes("warden.policy.shadow_promoted"))
      .map((l) => JSON.parse(l) as { body: Record<string, unknown> });
    expect(promoted).toHaveLength(1);
    expect(promoted[0]?.body).toMatchObject({ by: "alice", report_sha256: report.sha256, report_diffs: 1 });
    const url = await start();
    const denied = await execute(url, "secret-token-2");
    expect(denied.decision).toBe("deny");
    expect(JSON.stringify(denied)).not.toContain("secret-token-2\\n");
  });
});
