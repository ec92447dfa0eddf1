// The command line a host runs for Warden's hooks: absolute paths to this Node and this
// package's launcher (no reliance on PATH), each quoted for the host's shell. Every install
// command (`warden hooks install HOST`) writes one of these lines, so a host finds Warden
// even where `warden` is not on PATH:
//   hookCommand(host)       the one-shot `warden hooks <host>` (loads the engine per event)
//   hookEntryCommand(host)  the lean entry bin/warden-hook.js: forwards the event to the hook
//                           daemon's Unix socket, starting the daemon when it is not running
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** POSIX single-quoting: the value is one word whatever it holds. */
export function shellQuote(value: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The package's root: the nearest folder above this file (dist/src/cli/commands or src/cli/commands) with bin/warden.js. */
function packageRoot(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  let dir = here;
  for (let i = 0; i < 5; i++) {
    dir = dirname(dir);
    if (existsSync(join(dir, "bin", "warden.js"))) return dir;
  }
  return join(here, "..", "..", "..", "..");
}

/** The package's `bin/warden.js`. */
export function wardenLauncher(): string {
  return join(packageRoot(), "bin", "warden.js");
}

/** The package's lean hook entry `bin/warden-hook.js` (imports only Node's built-ins). */
export function hookEntryLauncher(): string {
  return join(packageRoot(), "bin", "warden-hook.js");
}

/** `'<node>' '<…/bin/warden.js>' hooks <host>`: what a host runs for one hook event. */
export function hookCommand(host: string): string {
  return [process.execPath, wardenLauncher(), "hooks", host].map(shellQuote).join(" ");
}

/**
 * `'<node>' '<…/bin/warden-hook.js>' <host> [--dir <dir>]`: the lean entry, through the
 * hook daemon (docs/hooks-daemon.md). `dir` only when the state directory is not the default.
 */
export function hookEntryCommand(host: string, dir?: string): string {
  const words = [process.execPath, hookEntryLauncher(), host, ...(dir !== undefined ? ["--dir", dir] : [])];
  return words.map(shellQuote).join(" ");
}
