// Connections to downstream MCP servers (stdio or Streamable HTTP, via the official SDK)
// and the pool of a deployment's declared upstreams. Every request to an upstream is
// bounded: connecting, listing and reading have a timeout, and a listing stops at a
// fixed number of entries, so a slow or endless upstream costs a coded error, not a hang.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ExecutorError } from "../contracts/index.js";

export type McpServerSpec =
  | { kind: "stdio"; command: string; args?: string[]; env?: Record<string, string>; cwd?: string }
  | { kind: "http"; url: string; headers?: Record<string, string> };

export interface McpToolInfo {
  name: string;
  description: string | undefined;
  inputSchema: Record<string, unknown>;
}

export interface McpResourceInfo {
  uri: string;
  name: string;
  description?: string;
  mimeType?: string;
}

export interface McpPromptInfo {
  name: string;
  description?: string;
  arguments?: { name: string; description?: string; required?: boolean }[];
}

/** Most entries read from one listing (tools, resources, prompts) before it is cut. */
export const MCP_MAX_LIST_ENTRIES = 10_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

function protocolError(name: string, what: string, err: unknown): ExecutorError {
  const m = (err as Error)?.message ?? String(err);
  if (/timed? ?out/i.test(m)) return new ExecutorError("ERR_EXEC_TIMEOUT", `${name}: ${what} timed out`);
  return new ExecutorError("ERR_EXEC_MCP_PROTOCOL", `${name}: ${what} failed: ${m.slice(0, 300)}`);
}

/** One live connection to a downstream MCP server. */
export class McpConnection {
  readonly name: string;
  readonly #client: Client;
  readonly #timeoutMs: number;

  private constructor(name: string, client: Client, timeoutMs: number) {
    this.name = name;
    this.#client = client;
    this.#timeoutMs = timeoutMs;
  }

  /** Connects (bounded by `timeoutMs`, which also bounds every later list or read request). */
  static async connect(
    name: string,
    spec: McpServerSpec,
    timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS,
  ): Promise<McpConnection> {
    const client = new Client({ name: "warden", version: "0.1.0" });
    const transport =
      spec.kind === "stdio"
        ? new StdioClientTransport({
            command: spec.command,
            ...(spec.args !== undefined ? { args: spec.args } : {}),
            ...(spec.env !== undefined ? { env: spec.env } : {}),
            ...(spec.cwd !== undefined ? { cwd: spec.cwd } : {}),
            stderr: "ignore",
          })
        : new StreamableHTTPClientTransport(
            new URL(spec.url),
            spec.headers !== undefined ? { requestInit: { headers: spec.headers } } : undefined,
          );
    try {
      await client.connect(transport, { timeout: timeoutMs });
    } catch (err) {
      await client.close().catch(() => undefined);
      throw new ExecutorError(
        "ERR_EXEC_MCP_PROTOCOL",
        `cannot connect to MCP server ${name}: ${(err as Error).message}`,
      );
    }
    return new McpConnection(name, client, timeoutMs);
  }

  async #pages<T>(what: string, page: (cursor: string | undefined) => Promise<[T[], string | undefined]>) {
    const out: T[] = [];
    let cursor: string | undefined;
    try {
      do {
        const [items, next] = await page(cursor);
        out.push(...items);
        cursor = next;
      } while (cursor !== undefined && out.length < MCP_MAX_LIST_ENTRIES);
    } catch (err) {
      throw protocolError(this.name, what, err);
    }
    return out.slice(0, MCP_MAX_LIST_ENTRIES);
  }

  #opts() {
    return { timeout: this.#timeoutMs };
  }

  listTools(): Promise<McpToolInfo[]> {
    return this.#pages("tools/list", async (cursor) => {
      const p = await this.#client.listTools(cursor === undefined ? {} : { cursor }, this.#opts());
      const tools = p.tools.map((t) => ({
        name: t.name,
        description: t.description,
        inputSchema: t.inputSchema as Record<string, unknown>,
      }));
      return [tools, p.nextCursor];
    });
  }

  /** Resources of a server that declares the capability (none otherwise). */
  listResources(): Promise<McpResourceInfo[]> {
    if (this.#client.getServerCapabilities()?.resources === undefined) return Promise.resolve([]);
    return this.#pages("resources/list", async (cursor) => {
      const p = await this.#client.listResources(cursor === undefined ? {} : { cursor }, this.#opts());
      return [p.resources as McpResourceInfo[], p.nextCursor];
    });
  }

  listPrompts(): Promise<McpPromptInfo[]> {
    if (this.#client.getServerCapabilities()?.prompts === undefined) return Promise.resolve([]);
    return this.#pages("prompts/list", async (cursor) => {
      const p = await this.#client.listPrompts(cursor === undefined ? {} : { cursor }, this.#opts());
      return [p.prompts as McpPromptInfo[], p.nextCursor];
    });
  }

  async readResource(uri: string, signal: AbortSignal): Promise<Record<string, unknown>> {
    try {
      return (await this.#client.readResource({ uri }, { signal, ...this.#opts() })) as Record<
        string,
        unknown
      >;
    } catch (err) {
      throw protocolError(this.name, "resources/read", err);
    }
  }

  async getPrompt(
    name: string,
    args: Record<string, string>,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    try {
      return (await this.#client.getPrompt({ name, arguments: args }, { signal, ...this.#opts() })) as Record<
        string,
        unknown
      >;
    } catch (err) {
      throw protocolError(this.name, "prompts/get", err);
    }
  }

  /** A tool call; its deadline is the caller's signal (the executor's timeout). */
  async callTool(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<unknown> {
    return this.#client.callTool({ name, arguments: args }, undefined, { signal, timeout: 24 * 3600 * 1000 });
  }

  close(): Promise<void> {
    return this.#client.close();
  }
}

/**
 * A deployment's declared upstreams, connected on first use and kept open. A name that
 * was not declared is refused (ERR_EXEC_MCP_UPSTREAM_UNKNOWN), never guessed.
 */
export class McpUpstreams {
  readonly #specs: Readonly<Record<string, McpServerSpec>>;
  readonly #timeoutMs: number;
  readonly #live = new Map<string, Promise<McpConnection>>();

  constructor(specs: Readonly<Record<string, McpServerSpec>>, options: { timeoutMs?: number } = {}) {
    this.#specs = specs;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  }

  /** Upstreams that are already connected (tests, pre-connected deployments). */
  static of(connections: Readonly<Record<string, McpConnection>>): McpUpstreams {
    const u = new McpUpstreams({});
    for (const [name, c] of Object.entries(connections)) u.#live.set(name, Promise.resolve(c));
    return u;
  }

  names(): string[] {
    return [...new Set([...Object.keys(this.#specs), ...this.#live.keys()])];
  }

  has(name: string): boolean {
    return Object.hasOwn(this.#specs, name) || this.#live.has(name);
  }

  get(name: string): Promise<McpConnection> {
    let c = this.#live.get(name);
    if (c !== undefined) return c;
    const spec = Object.hasOwn(this.#specs, name) ? this.#specs[name] : undefined;
    if (spec === undefined) {
      return Promise.reject(
        new ExecutorError("ERR_EXEC_MCP_UPSTREAM_UNKNOWN", `no MCP upstream named ${name} is declared`),
      );
    }
    c = McpConnection.connect(name, spec, this.#timeoutMs);
    // A failed connection is not cached: the next use tries again.
    c.catch(() => this.#live.delete(name));
    this.#live.set(name, c);
    return c;
  }

  async close(): Promise<void> {
    const all = [...this.#live.values()];
    this.#live.clear();
    await Promise.all(all.map((p) => p.then((c) => c.close()).catch(() => undefined)));
  }
}
