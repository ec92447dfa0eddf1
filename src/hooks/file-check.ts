// A file tool call → the Gate parameters the host-tools preset decides on
// (docs/hooks-files.md). The path is placed as the host will place it (file-place.ts) and
// judged against the coding-agent profile (coding-profile.ts), so the preset never matches
// a path by its spelling:
//   path               the resolved absolute path (the first place)
//   pathResolved       false: the path cannot be placed (another user's ~name, NUL byte)
//   inWorkspace        every place lies in the workspace
//   scratch            every place is a scratch file in the temp directory (file-place.ts)
//   credentialPath     a place is a credential location (never readable, never writable),
//                      or a multi-linked file that is another name of a credential file
//   protectedPath      a place is never writable (hosts' hook settings, VCS hooks and
//                      config, shell start-up files, Warden's state; credentials included)
//   multiLink          a regular file with more than one hard link (writing it writes them all)
//   searchReachesCredential  Grep/Glob: the search can reach a credential location (file-search.ts)

import { homedir } from "node:os";
import type { CodingProfileConfig } from "./coding-profile.js";
import {
  allInWorkspace,
  anyCredential,
  anyProtected,
  type FileWhere,
  isScratch,
  linksToCredential,
  multiLinked,
  placeFile,
  profilesOf,
} from "./file-place.js";
import { checkSearch } from "./file-search.js";

export type FileParameters = Record<string, string | boolean>;

function str(input: Record<string, unknown>, ...keys: string[]): string | undefined {
  for (const k of keys) {
    const v = input[k];
    if (typeof v === "string") return v;
  }
  return undefined;
}

/** Search tools by native name; the grep-like ones take a regular expression and a ripgrep glob. */
const SEARCH_TOOLS = new Set([
  "grep",
  "glob",
  "search",
  "find",
  "codebase_search",
  "grep_search",
  "file_search",
  "search_file_content",
]);
const GREP_LIKE = new Set(["grep", "grep_search", "search_file_content"]);
const PATH_KEYS = [
  "file_path",
  "absolute_path",
  "notebook_path",
  "filename",
  "target_file",
  "path",
  "dir_path",
  "url",
];
const MAX_PATHS = 64;
/** The files an apply_patch body names (Codex's format: `*** Update File: src/a.ts`). */
const PATCH_FILE = /^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$/gm;

/** Every path one call names: its path field, a `paths` list, the files of a patch. */
function rawPaths(input: Record<string, unknown>): string[] {
  const out: string[] = [];
  const one = str(input, ...PATH_KEYS);
  if (one !== undefined) out.push(one);
  if (Array.isArray(input.paths)) for (const p of input.paths) if (typeof p === "string") out.push(p);
  const patch = str(input, "patch", "input");
  if (patch !== undefined) for (const m of patch.matchAll(PATCH_FILE)) out.push((m[1] ?? m[2] ?? "").trim());
  return out;
}

/**
 * A Grep glob in ripgrep's sense: one without a slash matches a name at any depth (`*.pem`
 * matches `a/b/x.pem`); a negated one (`!*.md`) only excludes, so it restricts nothing.
 */
function grepGlob(glob: string | undefined): string | undefined {
  if (glob === undefined || glob.startsWith("!")) return undefined;
  return glob.includes("/") ? glob : `**/${glob}`;
}

/**
 * A glob tool's patterns: its `pattern` (whitespace-separated patterns are several, as
 * Gemini's read_many_files sends them) and any `paths` / `include` lists; none: the root.
 */
function globPatterns(input: Record<string, unknown>): (string | undefined)[] {
  const out: string[] = [];
  const one = str(input, "pattern", "glob", "query");
  if (one !== undefined) out.push(...one.split(/\s+/).filter((g) => g !== ""));
  for (const k of ["paths", "include"]) {
    const list = input[k];
    if (Array.isArray(list)) for (const g of list) if (typeof g === "string" && g !== "") out.push(g);
  }
  return out.length === 0 ? [undefined] : out;
}

function searchReaches(native: string, input: Record<string, unknown>, where: FileWhere): boolean {
  const isGlobTool = !GREP_LIKE.has(native);
  const globs = isGlobTool ? globPatterns(input) : [grepGlob(str(input, "glob", "include"))];
  if (globs.length > MAX_PATHS) return true;
  const path = str(input, "path", "dir_path");
  const profiles = profilesOf(where);
  return globs.some((glob) => checkSearch({ path, glob, isGlobTool }, where, profiles).reaches);
}

const UNRESOLVED = {
  pathResolved: false,
  inWorkspace: false,
  scratch: false,
  credentialPath: true,
  protectedPath: true,
  multiLink: false,
} as const;

/** The judgement of one path (file-place.ts). */
function onePath(raw: string, where: FileWhere, profiles: ReturnType<typeof profilesOf>): FileParameters {
  const placed = placeFile(raw, where);
  if (!placed.ok) return { path: raw.slice(0, 4096), ...UNRESOLVED };
  const places = placed.places;
  return {
    path: (places[0] ?? raw).slice(0, 4096),
    pathResolved: true,
    inWorkspace: allInWorkspace(where.workspace, places),
    scratch: isScratch(placed, where.workspace),
    credentialPath: anyCredential(profiles, places) || linksToCredential(profiles, places),
    protectedPath: anyProtected(profiles, places),
    multiLink: multiLinked(places),
  };
}

/** Several paths: refused if any is refused, inside (or scratch) only if all are. */
function combine(all: FileParameters[]): FileParameters {
  const every = (k: string) => all.every((p) => p[k] === true);
  const some = (k: string) => all.some((p) => p[k] === true);
  return {
    path: all[0]?.path ?? "",
    pathResolved: every("pathResolved"),
    inWorkspace: every("inWorkspace"),
    scratch: every("scratch"),
    credentialPath: some("credentialPath"),
    protectedPath: some("protectedPath"),
    multiLink: some("multiLink"),
  };
}

/** The Gate parameters of one file tool call (`action`: read, write, edit, delete). */
export function fileParameters(
  action: string,
  native: string | undefined,
  input: Record<string, unknown>,
  where: FileWhere,
): FileParameters {
  const name = (native ?? "").toLowerCase();
  const searching = action === "read" && SEARCH_TOOLS.has(name);
  const raws = rawPaths(input);
  if (raws.length === 0 && searching) raws.push(where.workspace ?? process.cwd());
  if (raws.length === 0 || raws.length > MAX_PATHS)
    return { path: "", ...UNRESOLVED, searchReachesCredential: searching };
  const profiles = profilesOf(where);
  const base = combine(raws.map((r) => onePath(r, where, profiles)));
  return { ...base, searchReachesCredential: searching && searchReaches(name, input, where) };
}

/** The where of the engine's file checks: the workspace, the state dirs, the user's home. */
export function fileWhere(
  workspace: string | undefined,
  stateDirs: readonly string[],
  profile?: Partial<CodingProfileConfig>,
): FileWhere {
  return { workspace, stateDirs, home: homedir(), ...(profile !== undefined ? { profile } : {}) };
}
