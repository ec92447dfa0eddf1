// MCP tool definition pins shared by every replica, on one real PostgreSQL, each replica
// simulated by its own pool and its own McpExecutor: written as rug pulls on a fleet.
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasErrorCode } from "../../src/contracts/index.js";
import { McpExecutor, type McpToolInfo, mcpToolHash } from "../../src/executors/index.js";
import { composeExecutors } from "../../src/runtime/executors.js";
import { migrate, PgMcpPins } from "../../src/store-pg/index.js";
import { MemoryJournal } from "../executors/helpers.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { freshDatabase, poolOf } from "./helpers.js";

let server: PostgresServer;
let url: string;
const pools: pg.Pool[] = [];

beforeAll(async () => {
  server = await startPostgres();
  url = await freshDatabase(server.connectionString);
  const p = poolOf(url, 4);
  pools.push(p);
  await migrate(p);
}, 120_000);

afterAll(async () => {
  for (const p of pools) await p.end();
  await server?.stop();
});

interface Replica {
  ex: McpExecutor;
  journal: MemoryJournal;
}

/** One replica: its own pool, pin store handle, executor and journal. */
function replica(): Replica {
  const p = poolOf(url, 4);
  pools.push(p);
  const journal = new MemoryJournal();
  return { ex: new McpExecutor({ servers: {}, pins: new PgMcpPins(p) }, { journal }), journal };
}

const weather = (description: string): McpToolInfo => ({
  name: "weather",
  description,
  inputSchema: { type: "object", properties: { city: { type: "string" } } },
});
const honest = weather("Current weather for a city.");
const pulled = weather("Current weather for a city, in kelvin.");
const outcome = (c: Awaited<ReturnType<McpExecutor["compare"]>>) => (c.ok ? "ok" : c.code);

describe("MCP tool pins across replicas", () => {
  it("a rug pull served to replica B after replica A pinned the tool is refused on every replica", async () => {
    const [a, b, c] = [replica(), replica(), replica()];
    const first = await a.ex.compare("up1", honest);
    expect(first.ok && first.pinnedNow).toBe(true);
    expect(outcome(await b.ex.compare("up1", pulled))).toBe("ERR_EXEC_MCP_TOOL_CHANGED");
    expect(outcome(await c.ex.compare("up1", pulled))).toBe("ERR_EXEC_MCP_TOOL_CHANGED");
    expect(b.journal.ofType("warden.executor.mcp_tool_changed")[0]?.body).toMatchObject({
      pinned_hash: mcpToolHash(honest),
      observed_hash: mcpToolHash(pulled),
    });
    expect(outcome(await b.ex.compare("up1", honest))).toBe("ok");
  });

  it("concurrent first sightings of two definitions on three replicas: one is pinned, everywhere", async () => {
    const rs = [replica(), replica(), replica()];
    await Promise.all(
      pools.slice(-3).flatMap((p) => Array.from({ length: 4 }, () => p.query("SELECT pg_sleep(0.05)"))),
    );
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (rs[i % 3] as Replica).ex.compare("up2", i % 2 === 0 ? honest : pulled),
      ),
    );
    const accepted = new Set(results.flatMap((r) => (r.ok ? [r.hash] : [])));
    expect(accepted.size).toBe(1);
    expect(results.filter((r) => r.ok && r.pinnedNow)).toHaveLength(1);
    expect(results.filter((r) => !r.ok).every((r) => outcome(r) === "ERR_EXEC_MCP_TOOL_CHANGED")).toBe(true);
    const pinnedEvents = rs.flatMap((r) => r.journal.ofType("warden.executor.mcp_tool_pinned"));
    expect(pinnedEvents).toHaveLength(1);
  });

  it("a replica started later sees the pin", async () => {
    expect((await replica().ex.compare("up3", honest)).ok).toBe(true);
    const late = replica();
    const seen = await late.ex.compare("up3", honest);
    expect(seen.ok && seen.pinnedNow).toBe(false);
    expect(outcome(await late.ex.compare("up3", pulled))).toBe("ERR_EXEC_MCP_TOOL_CHANGED");
  });

  it("the operator's approval on one replica replaces the pin for all (the old definition is then refused)", async () => {
    const [a, b] = [replica(), replica()];
    await a.ex.compare("up4", honest);
    const pins = new PgMcpPins(pools[0] as pg.Pool);
    await pins.set("up4", "weather", mcpToolHash(pulled));
    expect(outcome(await b.ex.compare("up4", pulled))).toBe("ok");
    expect(outcome(await a.ex.compare("up4", honest))).toBe("ERR_EXEC_MCP_TOOL_CHANGED");
  });

  it("a node-local MCP pins file next to the shared store is refused (no silent split brain)", () => {
    let err: unknown;
    try {
      composeExecutors(
        { mcp: { upstreams: {}, pins: "/nonexistent/mcp-pins.json" } },
        {},
        new PgMcpPins(pools[0] as pg.Pool),
      );
    } catch (e) {
      err = e;
    }
    expect(hasErrorCode(err, "ERR_RUNTIME_CONFIG_INVALID")).toBe(true);
  });
});
