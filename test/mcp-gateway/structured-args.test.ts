// Structured (object/array) arguments of real upstream tools through the gateway, driven by
// the official SDK Client: the registry memory server's `create_entities` takes an entities
// array validated against its pinned schema; hostile values are refused with codes before
// the upstream sees them; a value copied from a tainted output into a nested field is still
// recognised by value provenance, so the taint rule fires.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JSON_ARG_LIMITS } from "../../src/tools/index.js";
import {
  type GatewayHarness,
  node,
  registryServer,
  startGateway,
  TOKENS,
  text,
  wardenMeta,
} from "./harness.js";

const POLICY = `
name: gateway-structured
version: "1.0"
rules:
  - id: no-tainted-memory
    name: tool output may not be copied into the memory graph
    priority: 5
    match: { toolClass: mcp, action: call, tool: memory__create_entities, taintSources: [mcp] }
    decision: deny
    reason: copied tool output stays out of memory
    reasonCode: TAINTED_MEMORY
  - id: calls
    name: calls
    priority: 20
    match: { toolClass: mcp, action: call, tool: [fs__read_text_file, memory__create_entities, memory__read_graph] }
    decision: allow
    reason: allowed
`;

const SECRET_LINE = "deploy token qv7Rk2Lm9Xw4Tz8Np3Hs6Jd1 for the staging cluster";

let dir: string;
let root: string;
let h: GatewayHarness;

beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "warden-gw-struct-")));
  root = join(dir, "root");
  mkdirSync(root);
  writeFileSync(join(root, "notes.txt"), SECRET_LINE);
  h = await startGateway({
    policy: POLICY,
    explicitCarry: true,
    upstreams: {
      fs: node(registryServer("server-filesystem"), [root]),
      memory: node(registryServer("server-memory"), [], { MEMORY_FILE_PATH: join(dir, "memory.jsonl") }),
    },
  });
}, 60_000);

afterAll(async () => {
  await h?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const entity = (name: string, observations: unknown[] = ["seen"], extra: Record<string, unknown> = {}) => ({
  name,
  entityType: "person",
  observations,
  ...extra,
});

async function create(entities: unknown) {
  const client = await h.connect(TOKENS.a);
  return client.callTool({ name: "memory__create_entities", arguments: { entities } });
}

const graph = async () => {
  const client = await h.connect(TOKENS.a);
  return JSON.parse(text(await client.callTool({ name: "memory__read_graph", arguments: {} }))) as {
    entities: { name: string; observations: string[] }[];
  };
};

/** The Gate decision a gateway result names. */
async function decisionOf(r: unknown) {
  const id = wardenMeta(r)["warden/decisionId"];
  const all = await h.gw.runtime.store.query({ type: "warden.gate.decision" });
  return all.find((e) => (e.body as { decision_id?: string }).decision_id === id)?.body as
    | { decision: string; reason_codes?: string[]; [k: string]: unknown }
    | undefined;
}

describe("structured arguments through the gateway (registry memory server)", () => {
  it("create_entities with an entities array works, metacharacters in strings included", async () => {
    const r = await create([entity("alice", ["likes a; b | c $(d) `e`"])]);
    expect(r.isError).not.toBe(true);
    const alice = (await graph()).entities.find((e) => e.name === "alice");
    expect(alice?.observations).toEqual(["likes a; b | c $(d) `e`"]);
  });

  it("shows the pinned entities schema to the client", async () => {
    const client = await h.connect(TOKENS.a);
    const t = (await client.listTools()).tools.find((x) => x.name === "memory__create_entities");
    expect(t?.inputSchema).toMatchObject({
      required: ["entities"],
      properties: { entities: { type: "array" } },
    });
  });

  it.each([
    [
      "a constructor key",
      "unsafe-key",
      [entity("m1", ["x"], { constructor: { prototype: { admin: true } } })],
    ],
    [
      "an oversized array",
      "array-length",
      Array.from({ length: JSON_ARG_LIMITS.maxItems + 1 }, (_, i) => entity(`e${i}`)),
    ],
    [
      "a too-deep object",
      "depth",
      [
        entity("m2", [
          JSON.parse(
            `${"[".repeat(JSON_ARG_LIMITS.maxDepth + 2)}"x"${"]".repeat(JSON_ARG_LIMITS.maxDepth + 2)}`,
          ),
        ]),
      ],
    ],
    ["a schema violation", "schema", [{ name: "m3", observations: "not an array" }]],
  ])(
    "an agent sending %s is refused with a code before the upstream is called",
    async (_what, rule, entities) => {
      const before = (await h.gw.runtime.store.query({ type: "warden.executor.evidence" })).length;
      const r = await create(entities);
      expect(r.isError).toBe(true);
      expect(text(r)).toMatch(/^ERR_MCP_DENIED/);
      const d = await decisionOf(r);
      expect(d?.decision).toBe("deny");
      // The Gate's reason names the argument and the rule (the rule of the ERR_TOOL_ARG_JSON_* code).
      expect(d?.reason_codes).toEqual([`contract_param_invalid:entities:${rule}`]);
      expect(text(r)).toContain(`contract_param_invalid:entities:${rule}`);
      expect((await h.gw.runtime.store.query({ type: "warden.executor.evidence" })).length).toBe(before);
    },
  );

  it("an agent sending a raw __proto__ key on the wire is refused and nothing is created", async () => {
    // Raw JSON-RPC text: the SDK Client would drop the key before sending it.
    const post = (body: string, sid?: string) =>
      fetch(h.http.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${TOKENS.a}`,
          "mcp-protocol-version": "2025-06-18",
          ...(sid !== undefined ? { "mcp-session-id": sid } : {}),
        },
        body,
      });
    const init = await post(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "raw", version: "1" },
        },
      }),
    );
    const sid = init.headers.get("mcp-session-id") as string;
    await init.text();
    await (await post(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), sid)).text();
    const call = await post(
      `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory__create_entities","arguments":` +
        `{"entities":[{"name":"m4","entityType":"x","observations":[],"__proto__":{"admin":true}}]}}}`,
      sid,
    );
    const reply = await call.text();
    expect(reply).toContain('"isError":true');
    expect(reply).toContain("ERR_TOOL_ARG_JSON_UNSAFE_KEY");
    expect((await graph()).entities.map((e) => e.name)).not.toContain("m4");
  });

  it("a tainted value hidden in a nested field of create_entities is still caught by value provenance", async () => {
    const client = await h.connect(TOKENS.a);
    // Control: the same call shape with a fresh value is allowed in this session.
    const ok = await client.callTool({
      name: "memory__create_entities",
      arguments: { entities: [entity("control", ["nothing copied here"])] },
    });
    expect(ok.isError).not.toBe(true);
    const read = await client.callTool({
      name: "fs__read_text_file",
      arguments: { path: join(root, "notes.txt") },
    });
    expect(text(read)).toBe(SECRET_LINE);
    const leak = await client.callTool({
      name: "memory__create_entities",
      arguments: { entities: [entity("bob", ["harmless", SECRET_LINE])] },
    });
    expect(leak.isError).toBe(true);
    expect(text(leak)).toMatch(/^ERR_MCP_DENIED: deny: .*TAINTED_MEMORY/);
    const d = await decisionOf(leak);
    expect(JSON.stringify(d)).toContain("entities[0].observations[1]");
    expect((await graph()).entities.map((e) => e.name)).not.toContain("bob");
  });
});
