// `warden mcp serve --config FILE` with a `memory:` section: the memory firewall's tools are
// served beside the upstream ones to a client that starts the gateway as a subprocess, and
// a malformed memory section stops the gateway from starting.
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPair, saveKeyPair } from "../../src/crypto/index.js";
import { runCli } from "../helpers/cli.js";
import { REPO_ROOT } from "../helpers/repo.js";
import { FIXTURE } from "./harness.js";

const POLICY = `
name: stdio-memory
version: "1.0"
rules:
  - { id: memory, name: m, priority: 10, match: { toolClass: memory }, decision: allow, reason: test }
  - { id: mcp, name: mcp, priority: 10, match: { toolClass: mcp, action: call }, decision: allow, reason: test }
`;

let dir: string;
const configWith = (name: string, memory: string): string => {
  const key = saveKeyPair(generateKeyPair("ed25519"), dir, { name: `journal-${name}` });
  const path = join(dir, `gateway-${name}.yaml`);
  writeFileSync(
    path,
    [
      "policies: [policy.yaml]",
      `journal: { path: journal-${name}.db, key: ${JSON.stringify(key.privatePem)} }`,
      "gate: { principals: [{ id: agent-a, roles: [] }] }",
      "pins: pins.json",
      "stdio: { principal: agent-a }",
      "upstreams:",
      `  test: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(FIXTURE)}] }`,
      memory,
      "",
    ].join("\n"),
  );
  return path;
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "warden-gw-memcli-"));
  writeFileSync(join(dir, "policy.yaml"), POLICY);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("warden mcp serve with a memory section", () => {
  it("serves the memory tools over stdio; a memory written is read back (store beside the journal, 0600)", async () => {
    const config = configWith("ok", "memory: { readScope: principal }");
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
      expect(names).toEqual(expect.arrayContaining(["test__add", "memory_write", "memory_read"]));
      const w = await client.callTool({
        name: "memory_write",
        arguments: { content: "the build is green", classification: "public" },
      });
      const id = (w.structuredContent as { value: { id: string } }).value.id;
      const r = await client.callTool({ name: "memory_read", arguments: { id } });
      expect((r.structuredContent as { value: { content: string } }).value.content).toBe(
        "the build is green",
      );
    } finally {
      await client.close();
    }
    const db = join(dir, "journal-ok.db.memory.db");
    expect(statSync(db).mode & 0o777).toBe(0o600);
  }, 30_000);

  it("a malformed memory section stops the gateway (ERR_MEMORY_CONFIG_INVALID)", async () => {
    const config = configWith("bad", "memory: { readScope: everything }");
    const r = await runCli("mcp", "tools", "--config", config);
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/ERR_MEMORY_CONFIG_INVALID|invalid memory configuration/);
  });
});
