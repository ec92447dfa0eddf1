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

const SEARCH_TOOLS = new Set([
  "grep",
  "glob",
  "search",
  "find",
  "codebase_search",
  "grep_search",
  "file_search",
]);

function searchParameters(
  native: string,
  input: Record<string, unknown>,
  where: FileWhere,
  base: FileParameters,
): FileParameters {
  const isGlobTool = native !== "grep" && native !== "grep_search";
  const glob = isGlobTool ? str(input, "pattern", "glob", "query") : grepGlob(str(input, "glob", "include"));
  const check = checkSearch({ path: str(input, "path"), glob, isGlobTool }, where, profilesOf(where));
  return {
    ...base,
    searchReachesCredential: check.reaches,
    ...(check.reaches ? { searchRefusal: check.why } : {}),
  };
}

/**
 * A Grep glob in ripgrep's sense: one without a slash matches a name at any depth (`*.pem`
 * matches `a/b/x.pem`); a negated one (`!*.md`) only excludes, so it restricts nothing.
 */
function grepGlob(glob: string | undefined): string | undefined {
  if (glob === undefined || glob.startsWith("!")) return undefined;
  return glob.includes("/") ? glob : `**/${glob}`;
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
  const raw =
    str(input, "file_path", "notebook_path", "filename", "target_file", "path", "url") ??
    (searching ? (where.workspace ?? process.cwd()) : "");
  const placed = placeFile(raw, where);
  if (!placed.ok) {
    return {
      path: raw.slice(0, 4096),
      pathResolved: false,
      inWorkspace: false,
      scratch: false,
      credentialPath: true,
      protectedPath: true,
      multiLink: false,
      searchReachesCredential: searching,
    };
  }
  const profiles = profilesOf(where);
  const places = placed.places;
  const base: FileParameters = {
    path: (places[0] ?? raw).slice(0, 4096),
    pathResolved: true,
    inWorkspace: allInWorkspace(where.workspace, places),
    scratch: isScratch(placed, where.workspace),
    credentialPath: anyCredential(profiles, places) || linksToCredential(profiles, places),
    protectedPath: anyProtected(profiles, places),
    multiLink: multiLinked(places),
    searchReachesCredential: false,
  };
  return searching ? searchParameters(name, input, where, base) : base;
}

/** The where of the engine's file checks: the workspace, the state dirs, the user's home. */
export function fileWhere(workspace: string | undefined, stateDirs: readonly string[]): FileWhere {
  return { workspace, stateDirs, home: homedir() };
}
