// MCP tool definition pins shared by every replica (src/executors McpPins port). The
// first pin of a (server, tool) is one `INSERT … ON CONFLICT DO NOTHING`: of two replicas
// pinning different definitions at once (a server answering each differently, a rug pull
// timed between them) one wins, and the other reads the winner's pin back and refuses its
// definition as changed. Only the operator's approval (`set`) replaces a pin.
import type pg from "pg";
import { isSha256Hash, RuntimeError, type Sha256Hash } from "../contracts/index.js";
import { storeError } from "./connect.js";

function hashOf(server: string, tool: string, value: string | undefined): Sha256Hash | undefined {
  if (value === undefined) return undefined;
  if (!isSha256Hash(value))
    throw new RuntimeError("ERR_RUNTIME_STATE_CORRUPT", `the MCP pin of ${server}/${tool} is unreadable`);
  return value;
}

/** src/executors McpPinFirst (structurally: store-pg does not import the executors layer). */
export interface McpPinFirst {
  hash: Sha256Hash;
  pinnedNow: boolean;
}

/** Implements src/executors McpPins (checked where the runtime wires it). */
export class PgMcpPins {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async get(server: string, tool: string): Promise<Sha256Hash | undefined> {
    let value: string | undefined;
    try {
      const r = await this.#pool.query<{ hash: string }>(
        "SELECT hash FROM mcp_pins WHERE server = $1 AND tool = $2",
        [server, tool],
      );
      value = r.rows[0]?.hash;
    } catch (err) {
      throw storeError("MCP pins", err);
    }
    return hashOf(server, tool, value);
  }

  async pinFirst(server: string, tool: string, hash: Sha256Hash): Promise<McpPinFirst> {
    try {
      const r = await this.#pool.query(
        "INSERT INTO mcp_pins (server, tool, hash) VALUES ($1, $2, $3) ON CONFLICT (server, tool) DO NOTHING",
        [server, tool, hash],
      );
      if (r.rowCount === 1) return { hash, pinnedNow: true };
    } catch (err) {
      throw storeError("MCP pins", err);
    }
    const pinned = await this.get(server, tool);
    if (pinned === undefined) throw storeError("MCP pins", new Error("a conflicting pin vanished"));
    return { hash: pinned, pinnedNow: false };
  }

  async set(server: string, tool: string, hash: Sha256Hash): Promise<void> {
    try {
      await this.#pool.query(
        "INSERT INTO mcp_pins (server, tool, hash) VALUES ($1, $2, $3) " +
          "ON CONFLICT (server, tool) DO UPDATE SET hash = excluded.hash",
        [server, tool, hash],
      );
    } catch (err) {
      throw storeError("MCP pins", err);
    }
  }
}
