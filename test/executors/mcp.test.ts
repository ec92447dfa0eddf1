import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  EvidenceEnvelope,
  type McpBinding,
  McpConnection,
  McpExecutor,
  McpPinStore,
  mcpToolHash,
  rawOutputHash,
} from "../../src/executors/index.js";
import { REPO_ROOT } from "../helpers/repo.js";
import { MemoryJournal, mint } from "./helpers.js";

const SERVER = join(REPO_ROOT, "test", "fixtures", "executors", "mcp-server.mjs");
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "warden-mcp-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function stdio(env: Record<string, string> = {}) {
  return McpConnection.connect("test", {
    kind: "stdio",
    command: process.execPath,
    args: [SERVER],
    env: { PATH: process.env.PATH ?? "/usr/bin", ...env },
    cwd: REPO_ROOT,
  });
}

function binding(tool: string): McpBinding {
  return { name: `test__${tool}`, version: "1.0.0", server: "test", tool, build: (p) => ({ ...p }) };
}

const call = (ex: McpExecutor, tool: string, params: Record<string, unknown>, timeoutMs?: number) =>
  ex.execute(
    mint(`test__${tool}`, params, { toolClass: "mcp", action: "call" }),
    binding(tool),
    timeoutMs !== undefined ? { timeoutMs } : {},
  );

describe("MCP executor over stdio", () => {
  let conn: McpConnection;
  beforeAll(async () => {
    conn = await stdio();
  });
  afterAll(async () => conn.close());

  it("lists tools and calls one, pinning it on first use", async () => {
    const journal = new MemoryJournal();
    const pins = new McpPinStore(join(dir, "pins-1.json"));
    const ex = new McpExecutor({ servers: { test: conn }, pins }, { journal });
    const tools = await conn.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["add", "big", "echo", "fail", "slow", "weather"]);
    const r = await call(ex, "add", { a: 2, b: 3 });
    if (!r.ok) throw new Error(`${r.code} ${r.message}`);
    expect(r.output.result.content).toEqual([{ type: "text", text: "5" }]);
    const ev = EvidenceEnvelope.parse(r.evidence);
    const add = tools.find((t) => t.name === "add");
    expect(ev.invocation).toEqual({
      kind: "mcp",
      server: "test",
      tool: "add",
      tool_hash: add && mcpToolHash(add),
    });
    expect(ev.output_hash).toBe(rawOutputHash(Buffer.from(JSON.stringify(r.output.result))));
    expect(r.taint.map((t) => t.source)).toEqual(["mcp"]);
    expect(journal.ofType("warden.executor.mcp_tool_pinned")).toHaveLength(1);
    const file = JSON.parse(readFileSync(join(dir, "pins-1.json"), "utf8"));
    expect(file.pins.test.add).toBe(add && mcpToolHash(add));
    expect(statSync(join(dir, "pins-1.json")).mode & 0o777).toBe(0o600);
    // Second call: already pinned, no new pin event.
    expect((await call(ex, "add", { a: 1, b: 1 })).ok).toBe(true);
    expect(journal.ofType("warden.executor.mcp_tool_pinned")).toHaveLength(1);
  });

  it("reports tool errors, unknown tools, oversized results and timeouts", async () => {
    const ex = new McpExecutor({ servers: { test: conn }, pins: new McpPinStore(), maxOutputBytes: 1000 });
    const fail = await call(ex, "fail", {});
    expect(!fail.ok && fail.code).toBe("ERR_EXEC_TOOL_FAILED");
    expect(!fail.ok && fail.output?.isError).toBe(true);
    const unknown = await call(ex, "nope", {});
    expect(!unknown.ok && unknown.code).toBe("ERR_EXEC_MCP_TOOL_UNKNOWN");
    const big = await call(ex, "big", { n: 5000 });
    expect(!big.ok && big.code).toBe("ERR_EXEC_OUTPUT_TOO_LARGE");
    const slow = await call(ex, "slow", { ms: 3000 }, 200);
    expect(!slow.ok && slow.code).toBe("ERR_EXEC_TIMEOUT");
  });

  it("derives contracts from the tools' input schemas", async () => {
    const ex = new McpExecutor({ servers: { test: conn }, pins: new McpPinStore() });
    const wrapped = await ex.wrapTools("test");
    const weather = wrapped.find((w) => w.contract.mcp?.tool === "weather");
    expect(weather?.contract.tool.name).toBe("test__weather");
    expect(weather?.contract.tool.dispatch).toBe("mcp");
    expect(weather?.contract.args.city).toMatchObject({ type: "string", required: true });
    expect(weather?.contract.args.units).toMatchObject({
      type: "enum",
      allowed: ["metric", "imperial"],
      required: false,
    });
    expect(weather?.unsupported).toEqual([]);
  });
});

describe("MCP executor: rug pull", () => {
  it("refuses a tool whose description changed after it was pinned, journals it, and allows it after re-approval", async () => {
    const conn = await stdio({ RUG_PULL: "1" });
    try {
      const journal = new MemoryJournal();
      const pinPath = join(dir, "pins-rug.json");
      const ex = new McpExecutor({ servers: { test: conn }, pins: new McpPinStore(pinPath) }, { journal });
      const first = await call(ex, "weather", { city: "Oslo" });
      expect(first.ok).toBe(true);
      const pinned = JSON.parse(readFileSync(pinPath, "utf8")).pins.test.weather;

      const second = await call(ex, "weather", { city: "Oslo" });
      expect(second.ok).toBe(false);
      if (second.ok) return;
      expect(second.code).toBe("ERR_EXEC_MCP_TOOL_CHANGED");
      expect(second.evidence?.status).toBe("rejected");
      const changed = journal.ofType("warden.executor.mcp_tool_changed");
      expect(changed).toHaveLength(1);
      expect(changed[0]?.body).toMatchObject({ server: "test", tool: "weather", pinned_hash: pinned });
      expect(changed[0]?.body.observed_hash).not.toBe(pinned);

      // A fresh executor with the same pin file still refuses: the pin outlives the process.
      const again = new McpExecutor({ servers: { test: conn }, pins: new McpPinStore(pinPath) });
      expect(await call(again, "weather", { city: "x" }).then((r) => !r.ok && r.code)).toBe(
        "ERR_EXEC_MCP_TOOL_CHANGED",
      );

      const approved = await ex.approve("test", "weather");
      expect(approved).toBe(changed[0]?.body.observed_hash);
      expect(journal.ofType("warden.executor.mcp_tool_approved")[0]?.body).toMatchObject({
        previous_hash: pinned,
      });
      expect((await call(ex, "weather", { city: "Oslo" })).ok).toBe(true);
    } finally {
      await conn.close();
    }
  });

  it("refuses a tool that differs from the pin file before its first call in this process", async () => {
    const conn = await stdio();
    try {
      const pinPath = join(dir, "pins-preset.json");
      const tools = await conn.listTools();
      const echo = tools.find((t) => t.name === "echo");
      if (echo === undefined) throw new Error("no echo");
      const other = mcpToolHash({ ...echo, description: "Echo text back (the version that was reviewed)" });
      writeFileSync(pinPath, JSON.stringify({ version: 1, pins: { test: { echo: other } } }));
      const ex = new McpExecutor({ servers: { test: conn }, pins: new McpPinStore(pinPath) });
      const r = await call(ex, "echo", { text: "hi" });
      expect(!r.ok && r.code).toBe("ERR_EXEC_MCP_TOOL_CHANGED");
    } finally {
      await conn.close();
    }
  });

  it("rejects a corrupt pin store", () => {
    const p = join(dir, "bad.json");
    writeFileSync(p, JSON.stringify({ version: 1, pins: { test: { echo: "md5:abc" } } }));
    expect(() => new McpPinStore(p)).toThrowError(
      expect.objectContaining({ code: "ERR_EXEC_MCP_PIN_STORE" }),
    );
  });
});

describe("MCP executor over Streamable HTTP", () => {
  let child: ChildProcess;
  let url = "";
  beforeAll(async () => {
    child = spawn(process.execPath, [SERVER, "--http"], {
      cwd: REPO_ROOT,
      stdio: ["ignore", "pipe", "inherit"],
    });
    url = await new Promise<string>((resolve, reject) => {
      let buf = "";
      child.stdout?.on("data", (c: Buffer) => {
        buf += c.toString();
        const line = buf.split("\n")[0];
        if (buf.includes("\n") && line) resolve(`http://127.0.0.1:${JSON.parse(line).port}/mcp`);
      });
      child.once("exit", () => reject(new Error("MCP HTTP server exited")));
    });
  });
  afterAll(() => {
    child.kill();
  });

  it("calls a tool through the Gate ticket path", async () => {
    const conn = await McpConnection.connect("test", { kind: "http", url });
    try {
      const ex = new McpExecutor({ servers: { test: conn }, pins: new McpPinStore() });
      const r = await call(ex, "echo", { text: "over http" });
      if (!r.ok) throw new Error(`${r.code} ${r.message}`);
      expect(r.output.result.content).toEqual([{ type: "text", text: "over http" }]);
      expect(r.response.tool.status).toBe("success");
    } finally {
      await conn.close();
    }
  });
});
