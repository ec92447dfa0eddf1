// The protected workspace paths a contained call could create (they did not exist when it
// started, so they could not be bound read-only): noted before the call, moved aside after
// it (contain-run.ts). With the session's holder (contain-holder.ts) a call may leave
// processes running; their paths are kept in the holder's `watch.json` and swept again at
// every later call of the session until no process of it is left.
import { lstatSync, readFileSync, realpathSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { isWithin } from "./coding-profile-match.js";
import { HOST_SETTINGS_DIRS } from "./contain-profile.js";
import type { ContainSpec } from "./contain-spec.js";

/**
 * The protected workspace paths that do not exist (placed under the workspace's real path):
 * a missing one cannot be bound read-only, so the call could create it (`.git/commondir`,
 * `.github/hooks/x.json`, `.vscode/tasks.json`, a `.git/config` after `git init`). Not the
 * hosts' settings directories: read-only whole in the sandbox, and the host itself writes
 * there during a call (`.claude/settings.local.json` when the user allows a tool always).
 */
export function absentProtected(spec: ContainSpec): string[] {
  let ws: string;
  try {
    ws = realpathSync(spec.workspace);
  } catch {
    return [];
  }
  const settings = HOST_SETTINGS_DIRS.map((d) => join(ws, d));
  return spec.protectedPaths
    .filter((p) => isWithin(p, spec.workspace))
    .map((p) => join(ws, relative(spec.workspace, p)))
    .filter((p) => !settings.some((d) => isWithin(p, d)))
    .filter((p) => lstatSync(p, { throwIfNoEntry: false }) === undefined);
}

/**
 * After the call (every process of the sandbox is gone with its PID namespace): moves what
 * appeared at those paths aside to `<path>.warden-refused-<time>` — out of every host's and
 * git's reach, yet kept (the user may have made it during the call) — never through a link
 * (the parent must be where it was named). Said on stderr.
 */
export function removeCreated(paths: readonly string[]): void {
  for (const p of paths) {
    try {
      if (lstatSync(p, { throwIfNoEntry: false }) === undefined) continue;
      if (realpathSync(dirname(p)) !== dirname(p)) throw new Error("its folder is a link");
      const aside = `${p}.warden-refused-${Date.now()}`;
      renameSync(p, aside);
      process.stderr.write(
        `Warden containment: ${p} is protected; what the command created there is now ${aside}\n`,
      );
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      process.stderr.write(
        `Warden containment: ${p} was created during the command and not moved aside: ${why}\n`,
      );
    }
  }
}

/** Paths to sweep while the session's processes live (the holder directory's `watch.json`). */
export function watched(dir: string): string[] {
  try {
    const list: unknown = JSON.parse(readFileSync(join(dir, "watch.json"), "utf8"));
    return Array.isArray(list) ? list.filter((p): p is string => typeof p === "string") : [];
  } catch {
    return [];
  }
}

export function setWatched(dir: string, paths: readonly string[]): void {
  writeFileSync(join(dir, "watch.json"), JSON.stringify([...new Set(paths)]), { mode: 0o600 });
}
