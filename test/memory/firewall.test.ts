// The memory firewall's other rules: run lineage, bounds, embeddings through the Embedder
// port, the MCP-style tools, and configuration refusals.
import { afterEach, describe, expect, it } from "vitest";
import { type Embedder, lexicalEmbedder } from "../../src/context/index.js";
import { memoryTools, parseMemoryConfig } from "../../src/memory/index.js";
import { deployment, type MemoryDeployment } from "./helpers.js";

let d: MemoryDeployment | undefined;
afterEach(async () => {
  await d?.close();
  d = undefined;
});

describe("memory firewall", () => {
  it("with readScope lineage, a run sees its lineage's memories, not the principal's other runs'", async () => {
    d = await deployment({ readScope: "lineage" });
    const root = await d.rt.startRun("alice");
    const w = await d.memory.write(
      { principalId: "alice", runId: root.runId },
      { content: "lineage note", classification: "public" },
    );
    if (!w.ok) throw new Error(w.code);
    const child = await d.rt.startRun("alice", { parentRun: root.runId });
    const r = await d.memory.read({ principalId: "alice", runId: child.runId }, w.value.id);
    expect(r.ok).toBe(true);
    const stranger = await d.rt.startRun("alice");
    expect(await d.memory.read({ principalId: "alice", runId: stranger.runId }, w.value.id)).toMatchObject({
      ok: false,
      code: "ERR_MEMORY_NOT_FOUND",
    });
    const s = await d.memory.search({ principalId: "alice", runId: stranger.runId }, "lineage note");
    expect(s.ok && s.value).toEqual([]);
  });

  it("an agent flooding memory hits the per-principal bound (ERR_MEMORY_LIMIT)", async () => {
    d = await deployment({ maxRecordsPerPrincipal: 2 });
    const run = await d.rt.startRun("alice");
    const caller = { principalId: "alice", runId: run.runId };
    for (const n of ["one", "two"])
      expect((await d.memory.write(caller, { content: n, classification: "public" })).ok).toBe(true);
    expect(await d.memory.write(caller, { content: "three", classification: "public" })).toMatchObject({
      ok: false,
      code: "ERR_MEMORY_LIMIT",
    });
    expect(
      await d.memory.write(caller, { content: "x".repeat(20_000), classification: "public" }),
    ).toMatchObject({
      ok: false,
      code: "ERR_MEMORY_LIMIT",
    });
  });

  it("content the contract refuses (a bidi override hiding text) is denied at the Gate", async () => {
    d = await deployment();
    const run = await d.rt.startRun("alice");
    // A memory is structured data, never a shell line: metacharacters and line breaks are
    // content; invisible and bidi controls are not.
    const ok = await d.memory.write(
      { principalId: "alice", runId: run.runId },
      { content: "build: npm ci && npm test; see notes\nline two", classification: "public" },
    );
    expect(ok.ok).toBe(true);
    const r = await d.memory.write(
      { principalId: "alice", runId: run.runId },
      { content: "invoice approved \u202e)dias ton( ", classification: "public" },
    );
    expect(r).toMatchObject({ ok: false, code: "ERR_MEMORY_DENIED" });
    expect(r.ok === false && r.reasonCodes?.some((c) => c.startsWith("contract_param_invalid:content"))).toBe(
      true,
    );
  });

  it("search blends in the configured Embedder", async () => {
    const vectors: Record<string, number[]> = {
      "invoice due friday": [1, 0],
      "lunch plans": [0, 1],
      payments: [0.95, 0.05],
    };
    const embedder: Embedder = {
      id: "test-vectors",
      embed: async (texts) => texts.map((t) => Float32Array.from(vectors[t] ?? [0, 0])),
    };
    d = await deployment();
    const { MemoryFirewall } = await import("../../src/memory/index.js");
    const path = d.memory.config.path;
    d.memory.close();
    d.memory = MemoryFirewall.open(d.rt, { path }, { embedder });
    const run = await d.rt.startRun("alice");
    const caller = { principalId: "alice", runId: run.runId };
    const inv = await d.memory.write(caller, { content: "invoice due friday", classification: "public" });
    await d.memory.write(caller, { content: "lunch plans", classification: "public" });
    const s = await d.memory.search(caller, "payments");
    expect(s.ok && s.value.map((m) => m.id)).toEqual([inv.ok ? inv.value.id : ""]);
  });

  it("search uses the drift work's built-in lexical Embedder (one port for drift and memory)", async () => {
    d = await deployment();
    const { MemoryFirewall } = await import("../../src/memory/index.js");
    const path = d.memory.config.path;
    d.memory.close();
    d.memory = MemoryFirewall.open(d.rt, { path }, { embedder: lexicalEmbedder });
    const run = await d.rt.startRun("alice");
    const caller = { principalId: "alice", runId: run.runId };
    const inv = await d.memory.write(caller, {
      content: "invoices quarterly",
      classification: "public",
    });
    await d.memory.write(caller, { content: "lunch plans with the team", classification: "public" });
    // No shared word with the query ("invoice" ≠ "invoices"): only the n-gram vectors match.
    const s = await d.memory.search(caller, "invoice");
    expect(s.ok && s.value[0]?.id).toBe(inv.ok ? inv.value.id : "");
    // Without an embedder the same query finds nothing: the match above is the vectors'.
    d.memory.close();
    d.memory = MemoryFirewall.open(d.rt, { path });
    const plain = await d.memory.search(caller, "invoice");
    expect(plain.ok && plain.value).toEqual([]);
  });

  it("the MCP memory tools run through the firewall and report taint and codes", async () => {
    d = await deployment();
    const tools = memoryTools(d.memory);
    expect(tools.map((t) => t.definition.name)).toEqual([
      "memory_write",
      "memory_read",
      "memory_search",
      "memory_delete",
    ]);
    const run = await d.rt.startRun("alice");
    const caller = { principalId: "alice", runId: run.runId };
    const byName = (n: string) => tools.find((t) => t.definition.name === n)!;
    const w = await byName("memory_write").handle(caller, { content: "tool note", classification: "public" });
    expect(w.isError).toBe(false);
    const id = (w.content.value as { id: string }).id;
    const r = await byName("memory_read").handle(caller, { id });
    expect(r.content).toMatchObject({ value: { content: "tool note" }, taint: [] });
    const del = await byName("memory_delete").handle(caller, { id });
    expect(del.isError).toBe(false);
    const gone = await byName("memory_read").handle(caller, { id });
    expect(gone).toMatchObject({ isError: true, content: { code: "ERR_MEMORY_NOT_FOUND" } });
    const bad = await byName("memory_read").handle(caller, "not an object");
    expect(bad).toMatchObject({ isError: true, content: { code: "ERR_MEMORY_DENIED" } });
  });

  it("a configuration naming an unknown clearance level is refused", () => {
    expect(() => parseMemoryConfig({ path: ":memory:", clearance: { a: "top" } })).toThrow(
      expect.objectContaining({ code: "ERR_MEMORY_CONFIG_INVALID" }),
    );
    expect(() => parseMemoryConfig({})).toThrow(
      expect.objectContaining({ code: "ERR_MEMORY_CONFIG_INVALID" }),
    );
  });
});
