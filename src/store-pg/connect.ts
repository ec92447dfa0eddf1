// Connecting to the shared PostgreSQL: the `store` section of a configuration
// ({kind: postgres, url, pool, tls}) turned into a pg Pool. The URL may be `env:NAME`
// so the password stays out of the file. Every failure of the database is a coded
// error: ERR_RUNTIME_STORE_UNAVAILABLE (unreachable, restarted, a statement failed),
// and a caller refuses rather than decides (fail closed).
import { readFileSync } from "node:fs";
import pg from "pg";
import { RuntimeError, WardenError } from "../contracts/index.js";

export interface PgTlsOptions {
  /** "disable" (loopback only), "require" (encrypted, server unverified), "verify-full" (default with tls). */
  mode: "disable" | "require" | "verify-full";
  /** PEM file of the CA that signed the server's certificate (verify-full). */
  caFile?: string;
}

export interface PgStoreConfig {
  kind: "postgres";
  /** postgres://user:pass@host:5432/db, or `env:NAME` to read it from the environment. */
  url: string;
  pool?: {
    max?: number;
    idleTimeoutMs?: number;
    connectTimeoutMs?: number;
    statementTimeoutMs?: number;
    /** lock_timeout: a statement that waits this long for a lock fails (default 5000). */
    lockTimeoutMs?: number;
    /** idle_in_transaction_session_timeout: the server ends a session idle in a transaction this long (default 5000). */
    idleInTransactionTimeoutMs?: number;
  };
  tls?: PgTlsOptions;
}

/** `env:NAME` → the variable's value; a literal URL as it is. Throws ERR_RUNTIME_CONFIG_INVALID. */
export function resolveUrl(url: string, env: NodeJS.ProcessEnv = process.env): string {
  const named = /^env:([A-Za-z_][A-Za-z0-9_]*)$/.exec(url);
  const value = named === null ? url : env[named[1] as string];
  if (value === undefined || value === "") {
    throw new RuntimeError("ERR_RUNTIME_CONFIG_INVALID", `store.url: ${url} is not set`);
  }
  if (!/^postgres(ql)?:\/\//.test(value)) {
    throw new RuntimeError("ERR_RUNTIME_CONFIG_INVALID", "store.url must be a postgres:// URL or env:NAME");
  }
  return value;
}

export function sslOf(tls: PgTlsOptions | undefined): pg.PoolConfig["ssl"] {
  if (tls === undefined || tls.mode === "disable") return false;
  if (tls.mode === "require") return { rejectUnauthorized: false };
  let ca: string | undefined;
  if (tls.caFile !== undefined) {
    try {
      ca = readFileSync(tls.caFile, "utf8");
    } catch (err) {
      throw new RuntimeError("ERR_RUNTIME_CONFIG_INVALID", `store.tls.caFile: cannot read ${tls.caFile}`, {
        cause: err,
      });
    }
  }
  return { rejectUnauthorized: true, ...(ca !== undefined ? { ca } : {}) };
}

/** A pool for the configured database. Opens no connection yet. */
export function openPool(config: PgStoreConfig, env: NodeJS.ProcessEnv = process.env): pg.Pool {
  const p = config.pool ?? {};
  const pool = new pg.Pool({
    connectionString: resolveUrl(config.url, env),
    max: p.max ?? 16,
    idleTimeoutMillis: p.idleTimeoutMs ?? 30_000,
    connectionTimeoutMillis: p.connectTimeoutMs ?? 5_000,
    statement_timeout: p.statementTimeoutMs ?? 10_000,
    // A replica paused (SIGSTOP, GC, frozen VM) inside one of the few transactions left that
    // span round trips loses it after this long, and its locks with it; a statement waiting
    // for a lock fails (503) rather than wait out another replica's pause.
    lock_timeout: p.lockTimeoutMs ?? 5_000,
    idle_in_transaction_session_timeout: p.idleInTransactionTimeoutMs ?? 5_000,
    ssl: sslOf(config.tls),
    application_name: "warden",
  });
  // An idle client whose server went away emits here; without a listener the process
  // would crash. The next query on the pool reconnects or fails with a coded error.
  pool.on("error", () => undefined);
  return pool;
}

/** SQLSTATE classes of a database that is gone or restarting (connection, shutdown, recovery). */
const UNAVAILABLE_STATES = /^(08|57P|53)/;

/** Whether an error from pg means the database is unreachable (not a bad statement). */
export function isUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string" && UNAVAILABLE_STATES.test(code)) return true;
  if (typeof code === "string" && /^E[A-Z]+$/.test(code)) return true; // ECONNREFUSED, ECONNRESET, …
  const msg = err instanceof Error ? err.message : "";
  return /Connection terminated|connection timeout|Client has encountered a connection error/i.test(msg);
}

/** Any database failure as ERR_RUNTIME_STORE_UNAVAILABLE (a coded error passes through). */
export function storeError(what: string, err: unknown): WardenError {
  if (err instanceof WardenError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  return new RuntimeError(
    "ERR_RUNTIME_STORE_UNAVAILABLE",
    `${what}: the shared store failed${typeof code === "string" ? ` (${code})` : ""}`,
    { cause: err },
  );
}

/**
 * Runs `fn` in one transaction on one pooled connection: COMMIT when it resolves,
 * ROLLBACK when it throws. A client whose connection broke is destroyed, not reused.
 */
export function inTransaction<T>(
  pool: pg.Pool,
  fn: (c: pg.PoolClient) => Promise<T>,
  isolation = "READ COMMITTED",
): Promise<T> {
  return transact(pool, `BEGIN ISOLATION LEVEL ${isolation}`, (c) => fn(c));
}

/**
 * inTransaction (READ COMMITTED) whose first statement travels with the BEGIN in one
 * simple query: one round trip less. `first` takes no parameters (a constant statement,
 * never built from input); `fn` gets its rows.
 */
export function inTransactionFrom<T, R extends pg.QueryResultRow>(
  pool: pg.Pool,
  first: string,
  fn: (c: pg.PoolClient, rows: R[]) => Promise<T>,
): Promise<T> {
  return transact(pool, `BEGIN; ${first}`, (c, res) => {
    const results = res as unknown as pg.QueryResult<R>[];
    return fn(c, results[1]?.rows ?? []);
  });
}

async function transact<T>(
  pool: pg.Pool,
  begin: string,
  fn: (c: pg.PoolClient, began: pg.QueryResult) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: unknown;
  // A checked-out client whose socket dies emits "error" (pool.query listens; a held
  // client must too, or the process crashes): the transaction's next statement fails.
  const onError = (err: unknown) => {
    broken = err;
  };
  client.on("error", onError);
  try {
    const began = await client.query(begin);
    const out = await fn(client, began);
    await client.query("COMMIT");
    return out;
  } catch (err) {
    if (broken === undefined && isUnavailable(err)) broken = err;
    if (broken === undefined) await client.query("ROLLBACK").catch((e: unknown) => (broken = e));
    throw err;
  } finally {
    client.removeListener("error", onError);
    client.release(broken !== undefined);
  }
}
