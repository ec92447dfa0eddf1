// A throwaway PostgreSQL server for tests: initdb into a temp dir, listen only on a
// Unix socket inside it, stop and delete it afterwards. Runs as the `postgres` user
// when the tests run as root (postgres refuses root). Reusable by any test that
// needs a real server; `findPostgres()` returns why it cannot run, for skipIf.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface PostgresServer {
  /** Directory holding the Unix socket (pass as `host` to pg). */
  host: string;
  port: number;
  user: string;
  database: string;
  stop(): Promise<void>;
}

interface Found {
  bin: string;
  runAs: string | undefined;
}

function binDir(): string | undefined {
  const roots = existsSync("/usr/lib/postgresql") ? readdirSync("/usr/lib/postgresql").sort().reverse() : [];
  for (const v of roots) {
    const d = join("/usr/lib/postgresql", v, "bin");
    if (existsSync(join(d, "initdb")) && existsSync(join(d, "postgres"))) return d;
  }
  for (const d of ["/usr/local/bin", "/usr/bin", "/usr/local/pgsql/bin"]) {
    if (existsSync(join(d, "initdb")) && existsSync(join(d, "postgres"))) return d;
  }
  return undefined;
}

/** Where the server binaries are and which user runs them, or why not. */
export function findPostgres(): Found | { missing: string } {
  const bin = binDir();
  if (bin === undefined)
    return {
      missing: "PostgreSQL server binaries (initdb, postgres) not found; install the postgresql package",
    };
  if (process.getuid?.() !== 0) return { bin, runAs: undefined };
  try {
    execFileSync("id", ["-u", "postgres"], { stdio: "ignore" });
  } catch {
    return { missing: "running as root and there is no postgres user to run the server as" };
  }
  if (!existsSync("/usr/sbin/runuser") && !existsSync("/sbin/runuser") && !existsSync("/usr/bin/runuser")) {
    return { missing: "running as root without runuser to drop to the postgres user" };
  }
  return { bin, runAs: "postgres" };
}

function command(found: Found, exe: string, args: string[]): [string, string[]] {
  const full = join(found.bin, exe);
  return found.runAs === undefined ? [full, args] : ["runuser", ["-u", found.runAs, "--", full, ...args]];
}

export async function startPostgres(): Promise<PostgresServer> {
  const found = findPostgres();
  if ("missing" in found) throw new Error(found.missing);
  const dir = mkdtempSync(join(tmpdir(), "warden-pg-"));
  const data = join(dir, "data");
  if (found.runAs !== undefined) {
    const uid = Number(execFileSync("id", ["-u", found.runAs]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", found.runAs]).toString().trim());
    chownSync(dir, uid, gid);
  }
  const [initCmd, initArgs] = command(found, "initdb", [
    "-D",
    data,
    "-A",
    "trust",
    "-U",
    "postgres",
    "-E",
    "UTF8",
    "--no-sync",
  ]);
  execFileSync(initCmd, initArgs, { stdio: "ignore" });
  const port = 20000 + Math.floor(Math.random() * 30000);
  const [pgCmd, pgArgs] = command(found, "postgres", [
    "-D",
    data,
    "-k",
    dir,
    "-p",
    String(port),
    "-c",
    "listen_addresses=",
    "-c",
    "fsync=off",
    "-c",
    "max_connections=20",
  ]);
  const child: ChildProcess = spawn(pgCmd, pgArgs, { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.stderr?.on("data", (c: Buffer) => {
    log += c.toString();
  });
  const socket = join(dir, `.s.PGSQL.${port}`);
  const deadline = Date.now() + 30_000;
  while (!(existsSync(socket) && /ready to accept connections/.test(log))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`postgres did not start: ${log.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    host: dir,
    port,
    user: "postgres",
    database: "postgres",
    async stop() {
      // Signal the postmaster itself (runuser may not forward signals): SIGINT = fast shutdown.
      const pidFile = join(data, "postmaster.pid");
      const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8").split("\n")[0]) : undefined;
      if (pid !== undefined && pid > 0) {
        try {
          process.kill(pid, "SIGINT");
        } catch {
          // already gone
        }
      }
      if (child.exitCode === null) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(() => {
            child.kill("SIGKILL");
            resolve();
          }, 10_000);
          child.once("exit", () => {
            clearTimeout(t);
            resolve();
          });
        });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
