// A user's project with Warden installed from the packed tarball, offline: `npm pack` of the
// clone, then `npm ci --offline` in an empty temp project whose lockfile is the clone's
// (only the packages the tarball's production dependencies and the named extras reach), so
// every tarball comes from the npm cache the clone's own `npm install` filled, and nothing
// from the network. better-sqlite3's install script finds the binary the clone built or
// downloaded as a local prebuild (nothing is compiled, no GitHub download).
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = fileURLToPath(new URL("../..", import.meta.url));

interface LockEntry {
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  dev?: boolean;
  devOptional?: boolean;
  peer?: boolean;
  [k: string]: unknown;
}
interface PackageJson {
  name: string;
  version: string;
  license: string;
  dependencies: Record<string, string>;
  bin: Record<string, string>;
  engines: Record<string, string>;
  exports: Record<string, { types: string; default: string }>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, unknown>;
}

export const PKG = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as PackageJson;

/** npm without the settings of the `npm test` that runs this file (they name the clone). */
export function npmEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  const keep = /^npm_config_(cache|registry|userconfig)$/i;
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k) || keep.test(k)) env[k] = v;
  return { ...env, npm_config_update_notifier: "false", npm_config_fund: "false", ...extra };
}

const npmCli = process.env.npm_execpath?.endsWith(".js") ? process.env.npm_execpath : undefined;
/** Runs npm (the one running `npm test` when there is one) and returns its output. */
export function npm(args: string[], cwd: string, env: NodeJS.ProcessEnv = npmEnv()) {
  const [bin, argv] = npmCli ? [process.execPath, [npmCli, ...args]] : ["npm", args];
  return spawnSync(bin, argv, { cwd, env, encoding: "utf8", timeout: 300_000 });
}

/** `npm pack` of the clone into `dir`: the tarball's path and size. */
export function pack(dir: string): { file: string; bytes: number; files: string[] } {
  const r = npm(["pack", "--json", "--ignore-scripts", "--pack-destination", dir], REPO);
  if (r.status !== 0) throw new Error(`npm pack failed: ${r.stderr}`);
  const [info] = JSON.parse(r.stdout) as { filename: string; files: { path: string }[] }[];
  if (info === undefined) throw new Error("npm pack printed nothing");
  const file = join(dir, basename(info.filename));
  return { file, bytes: statSync(file).size, files: info.files.map((f) => f.path) };
}

/** The lock key a dependency `name` of the package at `from` resolves to (Node's lookup). */
function resolveDep(lock: Record<string, LockEntry>, from: string, name: string): string | undefined {
  let base = from;
  for (;;) {
    const key = `${base === "" ? "" : `${base}/`}node_modules/${name}`;
    if (lock[key] !== undefined) return key;
    if (base === "") return undefined;
    const i = base.lastIndexOf("/node_modules/");
    base = i < 0 ? "" : base.slice(0, i);
  }
}

/** The lock entries `roots` reach through dependencies and optional dependencies. */
function closure(lock: Record<string, LockEntry>, roots: string[]): Set<string> {
  const keep = new Set<string>();
  const visit = (key: string) => {
    if (keep.has(key)) return;
    keep.add(key);
    const e = lock[key] as LockEntry;
    for (const n of Object.keys({ ...e.dependencies, ...e.optionalDependencies })) {
      const k = resolveDep(lock, key, n);
      if (k !== undefined) visit(k);
    }
  };
  for (const r of roots) visit(r);
  return keep;
}

/**
 * Writes package.json and package-lock.json for a project depending on the tarball and
 * `extras`; returns the lock keys (node_modules/…) of the tarball's production dependencies.
 */
export function writeProject(dir: string, tarball: string, extras: string[]): string[] {
  const lock = (
    JSON.parse(readFileSync(join(REPO, "package-lock.json"), "utf8")) as {
      packages: Record<string, LockEntry>;
    }
  ).packages;
  const need = (name: string) => {
    const k = resolveDep(lock, "", name);
    if (k === undefined) throw new Error(`${name} is not in the clone's package-lock.json`);
    return k;
  };
  const keys = closure(lock, [...Object.keys(PKG.dependencies), ...extras].map(need));
  const file = basename(tarball);
  copyFileSync(tarball, join(dir, file));
  const deps: Record<string, string> = { [PKG.name]: `file:${file}` };
  for (const e of extras) deps[e] = lock[need(e)]?.version as string;
  const integrity = `sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`;
  const { name, version, license, dependencies, bin, engines, peerDependencies, peerDependenciesMeta } = PKG;
  const packages: Record<string, unknown> = {
    "": { name: "user-project", version: "1.0.0", dependencies: deps },
    [`node_modules/${name}`]: {
      ...{ version, resolved: `file:${file}`, integrity, license, dependencies, bin, engines },
      ...{ peerDependencies, peerDependenciesMeta },
    },
  };
  for (const k of [...keys].sort()) {
    const { dev: _d, devOptional: _o, peer: _p, ...entry } = lock[k] as LockEntry;
    packages[k] = entry;
  }
  const project = {
    name: "user-project",
    version: "1.0.0",
    private: true,
    type: "module",
    dependencies: deps,
  };
  writeFileSync(join(dir, "package.json"), `${JSON.stringify(project, null, 2)}\n`);
  const lockfile = { name: "user-project", version: "1.0.0", lockfileVersion: 3, requires: true, packages };
  writeFileSync(join(dir, "package-lock.json"), `${JSON.stringify(lockfile, null, 2)}\n`);
  return [...closure(lock, Object.keys(PKG.dependencies).map(need))];
}

/**
 * A prebuild directory holding the clone's better-sqlite3 binary under the name its
 * install script (prebuild-install) looks for, so the offline install compiles nothing.
 */
export function localPrebuilds(dir: string): Record<string, string> {
  const pkgDir = join(REPO, "node_modules", "better-sqlite3");
  const { version } = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as { version: string };
  const abi = process.versions.modules;
  const name = `better-sqlite3-v${version}-node-v${abi}-${process.platform}-${process.arch}.tar.gz`;
  mkdirSync(dir, { recursive: true });
  execFileSync("tar", ["-czf", join(dir, name), "build/Release/better_sqlite3.node"], { cwd: pkgDir });
  return { npm_config_better_sqlite3_local_prebuilds: dir };
}
