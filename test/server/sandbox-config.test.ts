// The sidecar's executors.process.sandbox section: a contract at risk tier high runs in the
// namespace tier the configuration asks for (bubblewrap: no network), while the same
// program at risk tier low runs in the process tier and reaches the socket (the control);
// `--check` reports a namespace tier this machine cannot provide; bad settings are refused.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bwrapUnavailable } from "../../src/executors/index.js";
import { checkSidecarConfig, parseSidecarConfig } from "../../src/server/index.js";
import { type Sidecar, startTestSidecar, TOKENS } from "./harness.js";

const why = bwrapUnavailable(undefined);

const probe = (name: string, risk: string) => `
[tool]
name = "${name}"
version = "1.0.0"
description = "Connects to a local port"
risk_tier = "${risk}"

[args.port]
type = "integer"
required = true
position = 1
min = 1
max = 65535

[apae]
data_source = "test://${name}"
data_classification = "internal"
retention_days = 30

[command]
exec = ["/usr/bin/python3", "-c", "import socket,sys; s = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=3); print(s.recv(16))", "{port}"]

[output]
format = "text"
schema = { type = "object", required = ["raw_output"] }
`;

let listener: Server;
let port = 0;
let sidecar: Sidecar;
const dir = mkdtempSync(join(tmpdir(), "warden-sandbox-config-"));

beforeAll(async () => {
  listener = createServer((s) => s.end("hello\n"));
  await new Promise<void>((r) => listener.listen(0, "127.0.0.1", r));
  const a = listener.address();
  port = typeof a === "object" && a !== null ? a.port : 0;
  mkdirSync(join(dir, "contracts"));
  writeFileSync(join(dir, "policy.yaml"), "rules: []\n");
  writeFileSync(join(dir, "contracts", "probe_high.clad.toml"), probe("probe_high", "high"));
  writeFileSync(join(dir, "contracts", "probe_low.clad.toml"), probe("probe_low", "low"));
  sidecar = await startTestSidecar({
    config: {
      contracts: join(dir, "contracts"),
      executors: {
        process: { workDir: "work", sandbox: { byRiskTier: { high: "namespace" } } },
      },
    },
  });
});

afterAll(async () => {
  await sidecar?.stop();
  await new Promise<void>((r) => listener.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

const base = {
  policies: ["policy.yaml"],
  journal: { path: "journal.db", key: "key.pem" },
  gate: { principals: [{ id: "a", roles: [] }] },
  auth: { principals: [{ id: "a", tokenSha256: `sha256:${"0".repeat(64)}` }] },
};

async function execute(tool: string): Promise<Record<string, unknown>> {
  const runId = await sidecar.run(tool);
  const r = await sidecar.call("/v1/execute", {
    token: TOKENS.agentA,
    body: { runId, toolClass: "shell", action: "exec", tool, parameters: { port } },
  });
  expect(r.status).toBe(200);
  return r.body.result as Record<string, unknown>;
}

describe("sidecar executors.process.sandbox", () => {
  it("bwrap works on this machine (required: .ci/run installs bubblewrap)", () => {
    expect(why, `namespace tier unavailable: ${why}`).toBeUndefined();
  });

  it("a high-risk contract runs in the namespace tier and cannot open a socket", async () => {
    // Control: the same program at risk tier low (process tier) reaches the listener.
    const low = await execute("probe_low");
    expect(low).toMatchObject({ ok: true });
    expect(JSON.stringify(low.output)).toContain("hello");
    const high = await execute("probe_high");
    expect(high).toMatchObject({ ok: false, code: "ERR_EXEC_TOOL_FAILED" });
    expect(JSON.stringify(high)).not.toContain("hello");
  });

  it("--check reports a namespace tier this machine cannot provide", async () => {
    const loaded = parseSidecarConfig(
      {
        ...base,
        executors: {
          process: {
            workDir: dir,
            sandbox: { tools: { t: { tier: "namespace" } }, bwrap: join(dir, "no-such-bwrap") },
          },
        },
      },
      dir,
    );
    const report = await checkSidecarConfig(loaded);
    expect(JSON.stringify(report)).toContain("the namespace tier is unavailable");
    // The process tier alone needs nothing from the machine.
    const plain = parseSidecarConfig(
      { ...base, executors: { process: { workDir: dir, sandbox: { tier: "process" } } } },
      dir,
    );
    expect(JSON.stringify(await checkSidecarConfig(plain))).not.toContain("executors.process.sandbox");
  });

  it("an unknown tier, a relative bind path or a zero limit is refused at load", () => {
    const bad = [
      { tier: "vm" },
      { tools: { t: { paths: [{ path: "relative/dir" }] } } },
      { limits: { memoryBytes: 0 } },
      { byRiskTier: { extreme: "namespace" } },
    ];
    const load = (sandbox: unknown) =>
      parseSidecarConfig({ ...base, executors: { process: { workDir: dir, sandbox } } }, dir);
    // Control: a valid section loads.
    const ok = {
      tier: "process",
      limits: { memoryBytes: 1 << 28 },
      tools: { t: { paths: [{ path: dir }] } },
    };
    expect(load(ok).config.executors.process?.sandbox).toMatchObject(ok);
    for (const sandbox of bad) {
      expect(() => load(sandbox)).toThrow(expect.objectContaining({ code: "ERR_SERVER_CONFIG_INVALID" }));
    }
  });
});
