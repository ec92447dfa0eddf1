// `warden mcp`: the gateway as a drop-in stdio MCP server (spawned exactly as an MCP
// client's configuration would start it), and the operator commands `tools` and `approve`.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPair, saveKeyPair } from "../../src/crypto/index.js";
import { runCli } from "../helpers/cli.js";
import { REPO_ROOT } from "../helpers/repo.js";
import { FIXTURE, HOSTILE } from "./harness.js";

const POLICY = `
name: stdio
version: "1.0"
rules:
  - { id: mcp, name: mcp, priority: 10, match: { toolClass: mcp, action: call }, decision: allow, reason: test }
`;

let dir: string;
let config: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "warden-gw-stdio-"));
  const key = saveKeyPair(generateKeyPair("ed25519"), dir, { name: "journal" });
  writeFileSync(join(dir, "policy.yaml"), POLICY);
  config = join(dir, "gateway.yaml");
  writeFileSync(
    config,
    [
      "policies: [policy.yaml]",
      `journal: { path: journal.db, key: ${JSON.stringify(key.privatePem)} }`,
      "gate: { principals: [{ id: agent-a, roles: [] }] }",
      "pins: pins.json",
      "stdio: { principal: agent-a }",
      "upstreams:",
      `  test: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(FIXTURE)}] }`,
      `  hostile: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(HOSTILE)}] }`,
      "",
    ].join("\n"),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("warden mcp serve (stdio, spawned)", () => {
  it("serves governed upstream tools to an SDK client that starts it as a subprocess", async () => {
    const client = new Client({ name: "desktop", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [join(REPO_ROOT, "bin", "warden.js"), "mcp", "serve", "--config", config],
        stderr: "ignore",
      }),
    );
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain("test__add");
      expect(names).not.toContain("hostile__notes");
      const r = await client.callTool({ name: "test__add", arguments: { a: 20, b: 22 } });
      expect((r.content as { text: string }[])[0]?.text).toBe("42");
    } finally {
      await client.close();
    }
  }, 30_000);
});

describe("warden mcp tools / approve", () => {
  it("lists what is served and refused, then admits a flagged tool after approval", async () => {
    const before = await runCli("mcp", "tools", "--config", config);
    expect(before.code).toBe(0);
    const report = JSON.parse(before.out) as {
      served: { tools: string[] }[];
      refused: { tool: string; code: string }[];
    };
    expect(report.refused).toContainEqual(
      expect.objectContaining({ tool: "notes", code: "ERR_EXEC_MCP_TOOL_FLAGGED" }),
    );
    expect(report.served[0]?.tools).not.toContain("hostile__notes");
    const approved = await runCli(
      "mcp",
      "approve",
      "--config",
      config,
      "--server",
      "hostile",
      "--tool",
      "notes",
    );
    expect(approved.code).toBe(0);
    expect(approved.out).toMatch(/^approved hostile\/notes sha256:[0-9a-f]{64}/);
    const pins = JSON.parse(readFileSync(join(dir, "pins.json"), "utf8")) as {
      pins: { hostile: Record<string, string> };
    };
    expect(pins.pins.hostile.notes).toMatch(/^sha256:/);
    const after = JSON.parse((await runCli("mcp", "tools", "--config", config)).out) as {
      served: { tools: string[] }[];
    };
    expect(after.served[0]?.tools).toContain("hostile__notes");
  });

  it("refuses to approve a tool of an upstream the configuration does not declare", async () => {
    const r = await runCli("mcp", "approve", "--config", config, "--server", "ghost", "--tool", "x");
    expect(r.code).toBe(2);
    expect(r.err).toContain("no upstream ghost");
  });
});
