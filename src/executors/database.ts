// The database executors: SQLite (better-sqlite3) and PostgreSQL (pg). The SQL
// text always comes from the contract's template and parameters are always
// bound, never spliced. Each statement is classified (read / write / ddl)
// before it runs and must match what the ticket's action was authorised for;
// the engine then cross-checks: SQLite must agree the statement is read-only,
// and PostgreSQL runs reads inside a READ ONLY transaction. Rows and bytes are
// capped; PostgreSQL statements carry a server-side statement_timeout.
import Database from "better-sqlite3";
import type pg from "pg";
import { ExecutorError } from "../contracts/index.js";
import type { Invocation } from "./evidence.js";
import {
  abortCode,
  type CallOptions,
  type ExecutionResult,
  type ExecutorDeps,
  type ExecutorErrorCode,
  runBound,
  type ToolIdentity,
} from "./runtime.js";
import { classifySql, type StatementClass } from "./sql-classify.js";

export type SqlParam = string | number | boolean | null;

export interface SqlSpec {
  /** From the contract's template; never built from parameters. */
  sql: string;
  /** Bound parameters: positional (`?`, `$1`) or named (`@name`, SQLite only). */
  params?: readonly SqlParam[] | Readonly<Record<string, SqlParam>>;
}

export interface DatabaseBinding extends ToolIdentity {
  build(parameters: Readonly<Record<string, unknown>>): SqlSpec;
}

export interface DatabaseOutput {
  rows: Record<string, unknown>[];
  /** Rows changed by a write (0 for reads). */
  changes: number;
  statementClass: StatementClass;
}

/** Which statement classes each ticket action may run. */
export const DEFAULT_ACTION_CLASSES: Readonly<Record<string, readonly StatementClass[]>> = {
  query: ["read"],
  read: ["read"],
  mutate: ["write"],
  write: ["write"],
  ddl: ["ddl"],
  migrate: ["ddl"],
};

export interface DatabaseExecutorOptions {
  maxRows?: number;
  maxBytes?: number;
  maxTimeoutMs?: number;
  actionClasses?: Readonly<Record<string, readonly StatementClass[]>>;
}

export interface SqliteExecutorOptions extends DatabaseExecutorOptions {
  /** Database file; reads use a second, read-only connection to it. */
  path: string;
}

export interface PostgresExecutorOptions extends DatabaseExecutorOptions {
  pool: pg.Pool;
}

type Fail = { code: ExecutorErrorCode; message: string };

function serialize(rows: unknown): Buffer {
  return Buffer.from(
    JSON.stringify(rows, (_k, v) =>
      typeof v === "bigint"
        ? v.toString()
        : v && typeof v === "object" && v.type === "Buffer" && Array.isArray(v.data)
          ? Buffer.from(v.data).toString("base64")
          : v,
    ),
  );
}

function checkParams(params: SqlSpec["params"]): Fail | undefined {
  if (params === undefined) return undefined;
  const values = Array.isArray(params) ? params : Object.values(params ?? {});
  if (!Array.isArray(params) && (typeof params !== "object" || params === null)) {
    return { code: "ERR_EXEC_SQL_PARAMS", message: "parameters must be an array or an object" };
  }
  for (const v of values) {
    const t = typeof v;
    if (!(v === null || t === "string" || t === "boolean" || (t === "number" && Number.isFinite(v)))) {
      return {
        code: "ERR_EXEC_SQL_PARAMS",
        message: "parameters must be strings, finite numbers, booleans or null",
      };
    }
  }
  return undefined;
}

abstract class DatabaseExecutorBase {
  protected readonly maxRows: number;
  protected readonly maxBytes: number;
  protected readonly maxTimeoutMs: number;
  readonly #actions: Readonly<Record<string, readonly StatementClass[]>>;
  readonly #deps: ExecutorDeps;
  protected abstract readonly engine: "sqlite" | "postgres";

  constructor(options: DatabaseExecutorOptions, deps: ExecutorDeps) {
    this.maxRows = options.maxRows ?? 10_000;
    this.maxBytes = options.maxBytes ?? 10 * 1024 * 1024;
    this.maxTimeoutMs = options.maxTimeoutMs ?? 30_000;
    this.#actions = options.actionClasses ?? DEFAULT_ACTION_CLASSES;
    this.#deps = deps;
  }

  execute(
    ticket: unknown,
    binding: DatabaseBinding,
    opts: CallOptions = {},
  ): Promise<ExecutionResult<DatabaseOutput>> {
    return runBound(
      ticket,
      {
        executor: "database",
        binding,
        defaultTaint: "tool-output",
        maxTimeoutMs: this.maxTimeoutMs,
        attempt: async (spec, { signal, ticket: t }) => {
          const cls = classifySql(spec.sql, this.engine);
          if (!cls.ok) return { invocation: null, error: { code: cls.code, message: cls.message } };
          const params = spec.params ?? [];
          const inv: Invocation = {
            kind: "database",
            engine: this.engine,
            sql: spec.sql,
            statement_class: cls.class,
            param_count: Array.isArray(params) ? params.length : Object.keys(params).length,
          };
          const allowed = Object.hasOwn(this.#actions, t.action) ? this.#actions[t.action] : undefined;
          if (allowed === undefined || !allowed.includes(cls.class)) {
            return {
              invocation: inv,
              error: {
                code: "ERR_EXEC_SQL_CLASS",
                message: `a ${cls.class} statement is not allowed for action ${t.action}`,
              },
            };
          }
          const bad = checkParams(spec.params);
          if (bad !== undefined) return { invocation: inv, error: bad };
          if (signal.aborted)
            return { invocation: inv, error: { code: abortCode(signal), message: "aborted" } };
          const res = await this.run(spec.sql, params, cls.class, signal);
          if ("code" in res) return { invocation: inv, error: res };
          const raw = serialize(res.rows);
          if (raw.length > this.maxBytes) {
            return {
              invocation: inv,
              error: { code: "ERR_EXEC_OUTPUT_TOO_LARGE", message: `result over ${this.maxBytes} bytes` },
            };
          }
          return {
            invocation: inv,
            raw,
            contentType: "application/json",
            output: { rows: res.rows, changes: res.changes, statementClass: cls.class },
          };
        },
      },
      this.#deps,
      opts,
    );
  }

  protected abstract run(
    sql: string,
    params: NonNullable<SqlSpec["params"]>,
    cls: StatementClass,
    signal: AbortSignal,
  ): Promise<{ rows: Record<string, unknown>[]; changes: number } | Fail>;
}

export class SqliteExecutor extends DatabaseExecutorBase {
  protected readonly engine = "sqlite" as const;
  readonly #rw: Database.Database;
  readonly #ro: Database.Database;

  constructor(options: SqliteExecutorOptions, deps: ExecutorDeps = {}) {
    super(options, deps);
    try {
      this.#rw = new Database(options.path, { fileMustExist: true });
      this.#ro = new Database(options.path, { readonly: true, fileMustExist: true });
    } catch (err) {
      throw new ExecutorError(
        "ERR_EXEC_CONFIG_INVALID",
        `cannot open SQLite database: ${(err as Error).message}`,
      );
    }
    // Extensions and attached files are outside any contract.
    this.#rw.unsafeMode(false);
  }

  close(): void {
    this.#rw.close();
    this.#ro.close();
  }

  protected async run(
    sql: string,
    params: NonNullable<SqlSpec["params"]>,
    cls: StatementClass,
  ): Promise<{ rows: Record<string, unknown>[]; changes: number } | Fail> {
    const db = cls === "read" ? this.#ro : this.#rw;
    const bound = Array.isArray(params)
      ? params.map((v) => (typeof v === "boolean" ? Number(v) : v))
      : Object.fromEntries(
          Object.entries(params).map(([k, v]) => [k, typeof v === "boolean" ? Number(v) : v]),
        );
    let stmt: Database.Statement;
    try {
      stmt = db.prepare(sql);
    } catch (err) {
      const msg = (err as Error).message;
      if (/more than one statement/i.test(msg)) return { code: "ERR_EXEC_SQL_MULTIPLE", message: msg };
      if (cls === "read" && /readonly|read-only/i.test(msg))
        return { code: "ERR_EXEC_SQL_CLASS", message: msg };
      return { code: "ERR_EXEC_SQL_SYNTAX", message: msg };
    }
    if (cls === "read" && !stmt.readonly) {
      return { code: "ERR_EXEC_SQL_CLASS", message: "SQLite reports this statement is not read-only" };
    }
    try {
      if (stmt.reader) {
        const rows: Record<string, unknown>[] = [];
        for (const row of stmt.iterate(bound) as Iterable<Record<string, unknown>>) {
          if (rows.length >= this.maxRows) {
            return { code: "ERR_EXEC_SQL_ROW_LIMIT", message: `more than ${this.maxRows} rows` };
          }
          rows.push(row);
        }
        return { rows, changes: 0 };
      }
      const info = stmt.run(bound);
      return { rows: [], changes: info.changes };
    } catch (err) {
      const e = err as Error & { code?: string };
      if (e instanceof RangeError || /bind|parameter/i.test(e.message)) {
        return { code: "ERR_EXEC_SQL_PARAMS", message: e.message };
      }
      if (e.code === "SQLITE_READONLY") return { code: "ERR_EXEC_SQL_CLASS", message: e.message };
      return { code: "ERR_EXEC_TOOL_FAILED", message: `${e.code ?? "SQLITE_ERROR"}: ${e.message}` };
    }
  }
}

export class PostgresExecutor extends DatabaseExecutorBase {
  protected readonly engine = "postgres" as const;
  readonly #pool: pg.Pool;

  constructor(options: PostgresExecutorOptions, deps: ExecutorDeps = {}) {
    super(options, deps);
    this.#pool = options.pool;
    // An idle client that the server drops (restart, admin shutdown) makes the pool emit
    // 'error'; with no listener that would crash the process. The next query on the pool
    // reports the failure as a coded result instead.
    if (this.#pool.listenerCount("error") === 0) this.#pool.on("error", () => {});
  }

  protected async run(
    sql: string,
    params: NonNullable<SqlSpec["params"]>,
    cls: StatementClass,
    signal: AbortSignal,
  ): Promise<{ rows: Record<string, unknown>[]; changes: number } | Fail> {
    if (!Array.isArray(params)) {
      return { code: "ERR_EXEC_SQL_PARAMS", message: "PostgreSQL takes positional parameters ($1, $2, ...)" };
    }
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (err) {
      return { code: "ERR_EXEC_IO", message: (err as Error).message };
    }
    const pid = (client as unknown as { processID?: number }).processID;
    const onAbort = () => {
      if (pid !== undefined) this.#pool.query("SELECT pg_cancel_backend($1)", [pid]).catch(() => {});
    };
    signal.addEventListener("abort", onAbort, { once: true });
    let broken = false;
    try {
      await client.query(cls === "read" ? "BEGIN TRANSACTION READ ONLY" : "BEGIN");
      await client.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(this.maxTimeoutMs))}`);
      const res = await client.query({ text: sql, values: params as unknown[] });
      if (res.rows.length > this.maxRows) {
        await client.query("ROLLBACK");
        return { code: "ERR_EXEC_SQL_ROW_LIMIT", message: `more than ${this.maxRows} rows` };
      }
      await client.query("COMMIT");
      return { rows: res.rows, changes: cls === "read" ? 0 : (res.rowCount ?? 0) };
    } catch (err) {
      const e = err as Error & { code?: string };
      await client.query("ROLLBACK").catch(() => {
        broken = true;
      });
      if (e.code === "57014") {
        return signal.aborted
          ? { code: abortCode(signal), message: "statement cancelled" }
          : { code: "ERR_EXEC_TIMEOUT", message: "statement_timeout" };
      }
      if (e.code === "25006")
        return { code: "ERR_EXEC_SQL_CLASS", message: "write attempted in a read-only transaction" };
      if (e.code === "42601") return { code: "ERR_EXEC_SQL_SYNTAX", message: e.message };
      if (e.code === "08P01" || /bind message/i.test(e.message))
        return { code: "ERR_EXEC_SQL_PARAMS", message: e.message };
      return { code: "ERR_EXEC_TOOL_FAILED", message: `${e.code ?? "PG"}: ${e.message}` };
    } finally {
      signal.removeEventListener("abort", onAbort);
      client.release(broken);
    }
  }
}
