// The walk of a workspace before a contained call (docs/hooks-containment.md "The profile"):
// its credential files (masked in the sandbox) and the control files of repositories nested
// in it (read-only), bounded — a walk that stops with folders unseen fails closed.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { isCredentialName } from "./coding-profile.js";

/** Folders the walk does not enter: dependencies, VCS data, virtualenvs (build outputs are entered: a `.env` is copied into dist/). */
const SKIP = new Set(["node_modules", ".git", ".venv", "venv", "__pycache__"]);

/** What the walk of a workspace found. */
export interface WorkspaceScan {
  /** Credential files (`.env`, `.env.local`, keys…): masked in the sandbox. */
  credentials: string[];
  /** The control files of repositories nested in the workspace (`sub/.git/config`, `hooks`…): read-only. */
  nestedGit: string[];
  /** The walk stopped at its depth or entry limit with folders left: what it did not see is not masked. */
  truncated: boolean;
}

const GIT_CONTROL_FILES = ["config", "hooks", "commondir", "config.worktree"];

/**
 * The workspace's credential files and nested repositories: a bounded walk, breadth first
 * so the entry budget is spent on the deepest folders last (a large folder listed before
 * the root `.env` never hides it). `truncated` says it stopped with folders left unseen.
 */
export function workspaceScan(workspace: string, maxDepth = 8, maxEntries = 20_000): WorkspaceScan {
  const out: WorkspaceScan = { credentials: [], nestedGit: [], truncated: false };
  let seen = 0;
  let level = [workspace];
  for (let depth = 0; level.length > 0; depth++) {
    if (depth > maxDepth) return { ...out, truncated: true };
    const next: string[] = [];
    for (const dir of level) {
      let entries: import("node:fs").Dirent[];
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const e of entries) {
        if (++seen > maxEntries) return { ...out, truncated: true };
        const p = join(dir, e.name);
        if (isCredentialName(e.name)) out.credentials.push(p);
        else if (e.name === ".git" && depth > 0)
          out.nestedGit.push(...GIT_CONTROL_FILES.map((f) => join(p, f)));
        else if (e.isDirectory() && !SKIP.has(e.name)) next.push(p);
      }
    }
    level = next;
  }
  return out;
}

/** The workspace's credential files (workspaceScan's). */
export function workspaceCredentials(workspace: string, maxDepth = 8, maxEntries = 20_000): string[] {
  return workspaceScan(workspace, maxDepth, maxEntries).credentials;
}

/**
 * The workspace is larger than the walk that finds its credential files and nested
 * repositories: what it did not see would not be masked, so the call is not contained
 * (asked, or denied with `containment: "required"`) — fail closed.
 */
export class ScanTruncated extends Error {
  constructor(workspace: string) {
    super(
      `the workspace ${workspace} is larger than the credential walk (depth 8, 20 000 entries outside node_modules and .git): a .env it did not reach would not be masked`,
    );
  }
}
