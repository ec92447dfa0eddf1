// The executors of a runtime, built by the composition root over the runtime's shared
// executor dependencies (journal, circuit breakers, DARE facts): entry points choose
// which media they serve through configuration and never construct an executor
// themselves. An executor that is not configured is absent, so a ticket for its medium
// is refused by the entry point's routing (fail closed), never served by a default.
import pg from "pg";
import { RuntimeError } from "../contracts/index.js";
import {
  type DatabaseExecutorOptions,
  type ExecutorDeps,
  FileExecutor,
  type FileExecutorOptions,
  HttpExecutor,
  type HttpExecutorOptions,
  McpExecutor,
  McpPinStore,
  type McpPins,
  type McpServerSpec,
  McpUpstreams,
  PostgresExecutor,
  ProcessExecutor,
  type ProcessExecutorOptions,
  SqliteExecutor,
} from "../executors/index.js";

/** A named database connection: a SQLite file or a PostgreSQL server (pool opened on first use). */
export type RuntimeDatabaseConfig = DatabaseExecutorOptions &
  (
    | { engine: "sqlite"; path: string }
    | { engine: "postgres"; connectionString: string; poolMax?: number; connectTimeoutMs?: number }
  );

/** MCP upstreams (connected on first use) and where their tool pins are kept. */
export interface RuntimeMcpConfig {
  upstreams: Readonly<Record<string, McpServerSpec>>;
  /** Pin file (JSON, 0600); absent: pins live in memory for the runtime's life. */
  pins?: string;
  maxOutputBytes?: number;
  maxTimeoutMs?: number;
  /** Bounds connecting and every list/read request to an upstream. */
  requestTimeoutMs?: number;
  onFlagged?: "refuse" | "pin";
}

export type DatabaseExecutor = SqliteExecutor | PostgresExecutor;

export interface RuntimeExecutorsConfig {
  http?: HttpExecutorOptions;
  process?: ProcessExecutorOptions;
  /** Built-in file tools' root (absolute, existing); the executor starts on first use. */
  file?: FileExecutorOptions;
  /** Database connections by name; each executor opens on first use. */
  database?: Readonly<Record<string, RuntimeDatabaseConfig>>;
  mcp?: RuntimeMcpConfig;
}

export interface RuntimeExecutors {
  readonly http: HttpExecutor | undefined;
  readonly process: ProcessExecutor | undefined;
  /** The file executor, started on first use; undefined when no root is configured. */
  file(): FileExecutor | undefined;
  /** The executor of a configured database connection (opened on first use), else undefined. */
  database(name: string): DatabaseExecutor | undefined;
  /** The MCP executor over the configured upstreams; undefined when none are configured. */
  readonly mcp: McpExecutor | undefined;
  /** Closes database pools and MCP connections (the runtime's close() calls it). */
  close(): Promise<void>;
}

/** Builds the configured executors; bad options throw their coded errors at start-up. */
export function composeExecutors(
  config: RuntimeExecutorsConfig | undefined,
  deps: ExecutorDeps,
  /** Distributed mode: the MCP tool pins every replica shares (src/store-pg). */
  sharedMcpPins?: McpPins,
): RuntimeExecutors {
  const http = config?.http !== undefined ? new HttpExecutor(config.http, deps) : undefined;
  const process = config?.process !== undefined ? new ProcessExecutor(config.process, deps) : undefined;
  const fileOptions = config?.file;
  let file: FileExecutor | undefined;
  const databases = new Map<string, DatabaseExecutor>();
  const pools: pg.Pool[] = [];
  const dbConfig = config?.database ?? {};
  const mcp = config?.mcp !== undefined ? mcpExecutor(config.mcp, deps, sharedMcpPins) : undefined;
  return {
    http,
    process,
    mcp,
    file() {
      if (fileOptions === undefined) return undefined;
      file ??= new FileExecutor(fileOptions, deps);
      return file;
    },
    database(name) {
      const known = databases.get(name);
      if (known !== undefined) return known;
      const c = Object.hasOwn(dbConfig, name) ? dbConfig[name] : undefined;
      if (c === undefined) return undefined;
      const ex = databaseExecutor(c, deps, pools);
      databases.set(name, ex);
      return ex;
    },
    async close() {
      await mcp?.upstreams.close();
      await Promise.all(pools.splice(0).map((p) => p.end().catch(() => undefined)));
    },
  };
}

function mcpExecutor(c: RuntimeMcpConfig, deps: ExecutorDeps, shared: McpPins | undefined): McpExecutor {
  if (shared !== undefined && c.pins !== undefined) {
    throw new RuntimeError(
      "ERR_RUNTIME_CONFIG_INVALID",
      "executors.mcp.pins is a node-local file: with store.kind postgres the pins are shared in the database",
    );
  }
  const upstreams = new McpUpstreams(
    c.upstreams,
    c.requestTimeoutMs !== undefined ? { timeoutMs: c.requestTimeoutMs } : {},
  );
  return new McpExecutor(
    {
      servers: upstreams,
      pins: shared ?? new McpPinStore(c.pins),
      ...(c.maxOutputBytes !== undefined ? { maxOutputBytes: c.maxOutputBytes } : {}),
      ...(c.maxTimeoutMs !== undefined ? { maxTimeoutMs: c.maxTimeoutMs } : {}),
      ...(c.onFlagged !== undefined ? { onFlagged: c.onFlagged } : {}),
    },
    deps,
  );
}

function databaseExecutor(c: RuntimeDatabaseConfig, deps: ExecutorDeps, pools: pg.Pool[]): DatabaseExecutor {
  const { maxRows, maxBytes, maxTimeoutMs, actionClasses } = c;
  const limits = {
    ...(maxRows !== undefined ? { maxRows } : {}),
    ...(maxBytes !== undefined ? { maxBytes } : {}),
    ...(maxTimeoutMs !== undefined ? { maxTimeoutMs } : {}),
    ...(actionClasses !== undefined ? { actionClasses } : {}),
  };
  if (c.engine === "sqlite") return new SqliteExecutor({ path: c.path, ...limits }, deps);
  const pool = new pg.Pool({
    connectionString: c.connectionString,
    max: c.poolMax ?? 4,
    connectionTimeoutMillis: c.connectTimeoutMs ?? 10_000,
  });
  // An idle client's error (server restart) must not crash the process; the next query reports it.
  pool.on("error", () => undefined);
  pools.push(pool);
  return new PostgresExecutor({ pool, ...limits }, deps);
}
