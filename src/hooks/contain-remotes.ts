// What a contained call needs from the project's git config (a worktree's `.git` file is
// followed to the common directory): the hosts of its remotes, added to the egress allowlist
// (a `git fetch`/`git push` over https to the project's own remote works; ssh remotes do not
// pass an HTTP proxy — docs/hooks-containment.md "Limitations"), and `core.hooksPath`.
import { type Dirent, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";

function readIf(path: string, max = 1024 * 1024): string | undefined {
  try {
    if (statSync(path).size > max) return undefined;
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** The repository's config file, if the workspace is (in) a git checkout's root. */
function gitConfigPath(workspace: string): string | undefined {
  const dotGit = join(workspace, ".git");
  if (!existsSync(dotGit)) return undefined;
  if (statSync(dotGit).isDirectory()) return join(dotGit, "config");
  const m = /^gitdir:\s*(.+)$/m.exec(readIf(dotGit, 4096) ?? "");
  if (!m?.[1]) return undefined;
  const gitdir = isAbsolute(m[1].trim()) ? m[1].trim() : resolve(workspace, m[1].trim());
  const common = readIf(join(gitdir, "commondir"), 4096)?.trim();
  return join(common ? resolve(gitdir, common) : gitdir, "config");
}

/** The host (`host` or `host:port` for a non-default http(s) port) of one remote URL. */
export function remoteHost(url: string): string | undefined {
  const scp = /^(?:[^@/\s]+@)?([A-Za-z0-9.-]+):(?!\/\/)/.exec(url);
  if (scp?.[1] && !url.includes("://")) return scp[1].toLowerCase();
  try {
    const u = new URL(url);
    if (!["https:", "http:", "ssh:", "git:", "git+ssh:"].includes(u.protocol) || u.hostname === "")
      return undefined;
    const web = u.protocol === "https:" || u.protocol === "http:";
    return web && u.port !== "" ? `${u.hostname}:${u.port}`.toLowerCase() : u.hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

function gitConfig(workspace: string): string | undefined {
  const path = gitConfigPath(workspace);
  return path !== undefined ? readIf(path) : undefined;
}

/**
 * The repository's `core.hooksPath`, absolute (relative ones are from the workspace): when it
 * lies in the workspace (husky's `.husky`), its hooks run on the user's next commit outside
 * the sandbox, so it is protected like `.git/hooks`.
 */
export function gitHooksPath(workspace: string): string | undefined {
  const text = gitConfig(workspace);
  if (text === undefined) return undefined;
  let inCore = false;
  let found: string | undefined;
  for (const line of text.split("\n")) {
    const section = /^\s*\[([^\]]*)\]/.exec(line);
    if (section) inCore = (section[1] ?? "").trim().toLowerCase() === "core";
    const kv = /^\s*hookspath\s*=\s*(.+?)\s*$/i.exec(line);
    if (inCore && kv?.[1]) found = kv[1].replace(/^"|"$/g, "");
  }
  if (found === undefined || found === "") return undefined;
  return isAbsolute(found) ? found : resolve(workspace, found);
}

/** Hosts of every `url =` / `pushurl =` of a `[remote "…"]` section. */
export function gitRemoteHosts(workspace: string): string[] {
  const text = gitConfig(workspace);
  if (text === undefined) return [];
  const hosts = new Set<string>();
  let inRemote = false;
  for (const line of text.split("\n")) {
    const section = /^\s*\[([^\]]*)\]/.exec(line);
    if (section) inRemote = /^remote\s+"/.test(section[1] ?? "");
    const kv = /^\s*(?:url|pushurl)\s*=\s*(.+?)\s*$/i.exec(line);
    if (inRemote && kv?.[1]) {
      const h = remoteHost(kv[1].replace(/^"|"$/g, ""));
      if (h !== undefined) hosts.add(h);
    }
    if (hosts.size >= 64) break;
  }
  return [...hosts];
}

const dirEntries = (dir: string): Dirent[] => {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
};

/**
 * Git's other config and hook locations in the workspace's git directory: each submodule's
 * gitdir (`.git/modules/<name>/`, names with slashes and nested submodules too) and each
 * linked worktree's admin directory (`.git/worktrees/<name>/`). Their `config`, `hooks`,
 * `commondir` and `config.worktree` run code or say where git reads it — the
 * superproject's `git status` enters every submodule — so they are protected like
 * `.git/config`. Bounded (256 directories, 6 levels).
 */
export function gitInnerControl(workspace: string, max = 256): string[] {
  const out: string[] = [];
  let dirs = 0;
  const gitdir = (d: string, depth: number) => {
    out.push(join(d, "config"), join(d, "hooks"), join(d, "commondir"), join(d, "config.worktree"));
    admin(d, depth + 1);
  };
  const names = (dir: string, depth: number) => {
    for (const e of dirEntries(dir)) {
      if (!e.isDirectory() || ++dirs > max || depth > 6) return;
      const d = join(dir, e.name);
      if (existsSync(join(d, "HEAD"))) gitdir(d, depth);
      else names(d, depth + 1);
    }
  };
  const admin = (d: string, depth: number) => {
    names(join(d, "modules"), depth);
    names(join(d, "worktrees"), depth);
  };
  const root = join(workspace, ".git");
  if (existsSync(root) && statSync(root).isDirectory()) admin(root, 0);
  return out;
}
