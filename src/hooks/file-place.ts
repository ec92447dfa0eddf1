// Where a file tool's path lands, resolved as the host's file system will resolve it
// (docs/hooks-files.md "Resolution"): `~` and `~/…` are the user's home, a relative path
// starts at the workspace, `file://` URLs are paths, `..` is taken both lexically (as
// path.resolve does) and physically (as the kernel does after a symbolic link), and every
// symbolic link — also a dangling one, also in the middle — is followed. A new file is its
// parent's real path plus its name. All the places a path may mean are returned: a check
// that refuses holds if any of them is refused, "inside" holds only if all are inside.
import { lstatSync, readdirSync, readlinkSync, realpathSync, type Stats, statSync } from "node:fs";
import { homedir, tmpdir, userInfo } from "node:os";
import { basename, dirname, isAbsolute, join, normalize, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type CodingProfile,
  type CodingProfileConfig,
  codingProfile,
  isCredentialPath,
  isProtectedPath,
  isWithin,
} from "./coding-profile.js";

const MAX_LINKS = 40;

/** Where the checks run: the workspace, Warden's state directories and the user's home. */
export interface FileWhere {
  workspace: string | undefined;
  stateDirs: readonly string[];
  home?: string;
  /** The operator's profile additions (extra credential and protected locations). */
  profile?: Partial<CodingProfileConfig>;
}

/**
 * A path resolved: `places` are the absolute paths it may mean (links followed, and the
 * lexical form); `lexical` is the path as named, normalised; `unresolved` names why none
 * could be made.
 */
export type Placed = { ok: true; places: string[]; lexical: string } | { ok: false; unresolved: string };

/** The path with every symbolic link followed, as far as it exists (never throws). */
export function physical(p: string, depth = 0): string {
  if (depth > MAX_LINKS) return p;
  try {
    return realpathSync(p);
  } catch {
    // A missing part, or a link whose target is missing: resolve what exists.
  }
  let st: Stats | undefined;
  try {
    st = lstatSync(p);
  } catch {
    st = undefined;
  }
  if (st?.isSymbolicLink()) {
    try {
      return physical(resolve(dirname(p), readlinkSync(p)), depth + 1);
    } catch {
      return p;
    }
  }
  const up = dirname(p);
  if (up === p) return p;
  return join(physical(up, depth + 1), basename(p));
}

/** `~`, `~/…` and `~<own name>/…` are the home; another user's `~name` is refused. */
function expandHome(raw: string, home: string): string | undefined {
  // Concatenated, not joined: a `..` after a link is resolved by the kernel, not lexically.
  if (raw === "~" || raw.startsWith("~/")) return `${home}${raw.slice(1)}`;
  if (!raw.startsWith("~")) return raw;
  const slash = raw.indexOf("/");
  const name = raw.slice(1, slash === -1 ? undefined : slash);
  let me = "";
  try {
    me = userInfo().username;
  } catch {
    me = "";
  }
  if (name !== me) return undefined;
  return `${home}${slash === -1 ? "" : raw.slice(slash)}`;
}

/** The absolute (not yet link-resolved) path a tool's path names, or why it cannot be placed. */
export function absoluteOf(raw: string, where: FileWhere): string | { unresolved: string } {
  const home = where.home ?? homedir();
  let p = raw;
  if (/^file:/i.test(p)) {
    try {
      p = fileURLToPath(p);
    } catch {
      return { unresolved: "a file: URL that names no local path" };
    }
  }
  if (p.includes("\u0000")) return { unresolved: "a NUL byte in the path" };
  const expanded = expandHome(p, home);
  if (expanded === undefined) return { unresolved: "another user's home (~name)" };
  if (isAbsolute(expanded)) return expanded;
  return `${resolve(where.workspace ?? process.cwd())}/${expanded}`;
}

/** Every place a file tool's path may mean (lexical and physical, links followed). */
export function placeFile(raw: string, where: FileWhere): Placed {
  if (raw === "") return { ok: false, unresolved: "no path" };
  const abs = absoluteOf(raw, where);
  if (typeof abs !== "string") return { ok: false, unresolved: abs.unresolved };
  const places = new Set([physical(normalize(abs)), physical(abs), normalize(abs)]);
  return { ok: true, places: [...places], lexical: normalize(abs) };
}

/** The coding profile placed both as given and with links resolved (a home under a link). */
export function profilesOf(where: FileWhere): CodingProfile[] {
  const home = where.home ?? homedir();
  const given = codingProfile(
    { home, workspace: where.workspace, stateDirs: where.stateDirs },
    where.profile,
  );
  const real = codingProfile(
    {
      home: physical(home),
      workspace: where.workspace === undefined ? undefined : physical(where.workspace),
      stateDirs: where.stateDirs.map((d) => physical(d)),
    },
    where.profile,
  );
  return [given, real];
}

/** A process's environment and memory (`/proc/self/environ` holds the host's API keys). */
const PROC_SECRET = /^\/proc\/[^/]+\/(task\/[^/]+\/)?(environ|mem|auxv)$/;

export const anyCredential = (profiles: readonly CodingProfile[], places: readonly string[]): boolean =>
  places.some((p) => PROC_SECRET.test(p) || profiles.some((pr) => isCredentialPath(pr, p)));

/**
 * The workspace's `.git` (the directory, or a worktree's `gitdir:` file): git reads config
 * and hooks through more than `config` and `hooks` (`commondir`, `modules/<name>/config`,
 * `worktrees/<name>/commondir`, the `.git` file itself), so the host's file tools never
 * write anywhere in it; git's own commands (contained, `.git` pinned) do.
 */
const inGitDir = (pr: CodingProfile, p: string): boolean =>
  pr.workspace !== undefined && isWithin(p, join(pr.workspace, ".git"));

export const anyProtected = (profiles: readonly CodingProfile[], places: readonly string[]): boolean =>
  places.some((p) => profiles.some((pr) => isProtectedPath(pr, p) || inGitDir(pr, p)));

/** Whether every place lies in the workspace (links resolved on both sides). */
export function allInWorkspace(workspace: string | undefined, places: readonly string[]): boolean {
  if (workspace === undefined) return false;
  const roots = [normalize(workspace), physical(workspace)];
  return places.every((p) => roots.some((r) => isWithin(p, r)));
}

function statOf(p: string): Stats | undefined {
  try {
    return statSync(p);
  } catch {
    return undefined;
  }
}

/** A regular file with more than one hard link: writing it writes every other name too. */
export function multiLinked(places: readonly string[]): boolean {
  return places.some((p) => {
    const st = statOf(p);
    return st?.isFile() === true && st.nlink > 1;
  });
}

/** The temp directories a scratch file may go to (their real paths). */
export function tempRoots(): string[] {
  return [...new Set([tmpdir(), "/tmp", "/var/tmp"].map((d) => physical(d)))];
}

/** The deepest existing directory above `p`, below `root`: the temp root itself or the user's own. */
function parentIsOwn(p: string, root: string, uid: number): boolean {
  for (let dir = dirname(p); dir !== root && isWithin(dir, root); dir = dirname(dir)) {
    let st: Stats;
    try {
      st = lstatSync(dir);
    } catch {
      continue;
    }
    return st.isDirectory() && (uid === -1 || st.uid === uid);
  }
  return true;
}

/**
 * A scratch file: every place in a temp directory, in a directory of the user's own (or the
 * temp directory itself), the file (if it exists) a regular file of the user's with one
 * link — never another user's file or folder, never a link out. A path named inside the
 * workspace is a workspace path: one that a link takes elsewhere is an escape, never scratch.
 */
export function isScratch(
  placed: { places: readonly string[]; lexical: string },
  workspace?: string,
): boolean {
  if (workspace !== undefined && isWithin(placed.lexical, normalize(workspace))) return false;
  const roots = tempRoots();
  const uid = typeof process.getuid === "function" ? process.getuid() : -1;
  return placed.places.every((p) => {
    const root = roots.find((r) => isWithin(p, r) && p !== r);
    if (root === undefined || !parentIsOwn(p, root, uid)) return false;
    let st: Stats | undefined;
    try {
      st = lstatSync(p);
    } catch {
      return true;
    }
    return st.isFile() && st.nlink === 1 && (uid === -1 || st.uid === uid);
  });
}

function sameFile(a: Stats, p: string): boolean {
  const b = statOf(p);
  return b?.isFile() === true && b.dev === a.dev && b.ino === a.ino;
}

function filesUnder(p: string, depth: number, out: string[]): void {
  if (out.length >= 512) return;
  const st = statOf(p);
  if (st === undefined) return;
  if (st.isFile()) {
    out.push(p);
    return;
  }
  if (!st.isDirectory() || depth > 2) return;
  let names: string[] = [];
  try {
    names = readdirSync(p);
  } catch {
    return;
  }
  for (const n of names) filesUnder(join(p, n), depth + 1, out);
}

/**
 * A multi-linked file that is another name of a credential file (a hard link to
 * ~/.ssh/id_ed25519 named notes.txt reads the key): compared by device and inode with the
 * files of the profile's credential locations.
 */
export function linksToCredential(profiles: readonly CodingProfile[], places: readonly string[]): boolean {
  const linked = places.map(statOf).filter((s): s is Stats => s?.isFile() === true && s.nlink > 1);
  if (linked.length === 0) return false;
  const files: string[] = [];
  const first = profiles[profiles.length - 1];
  for (const loc of [...(first?.credentials ?? []), ...(first?.stateDirs ?? [])]) filesUnder(loc, 0, files);
  return linked.some((s) => files.some((f) => sameFile(s, f)));
}
