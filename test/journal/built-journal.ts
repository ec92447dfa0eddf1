// Child-process journal tests run the compiled journal (dist/): rebuilt here when a
// source under src/journal is newer than the build. Type errors elsewhere in the tree do
// not stop tsc from emitting, so the caller checks the returned path exists.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { REPO_ROOT } from "../helpers/repo.js";

const newest = (dir: string) => Math.max(...readdirSync(dir).map((f) => statSync(join(dir, f)).mtimeMs));

/** Rebuilds dist/ when src/journal is newer; returns the compiled segment store's path. */
export function ensureBuiltJournal(): string {
  const built = resolve(REPO_ROOT, "dist/src/journal/segment-store.js");
  if (!existsSync(built) || statSync(built).mtimeMs < newest(resolve(REPO_ROOT, "src/journal"))) {
    try {
      execFileSync("npx", ["tsc", "-p", "tsconfig.build.json"], { cwd: REPO_ROOT, stdio: "pipe" });
    } catch {
      // As said: the caller checks what was emitted.
    }
  }
  return built;
}
