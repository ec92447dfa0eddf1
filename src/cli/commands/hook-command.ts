// The command line a host runs for Warden's hooks: absolute paths to this Node and this
// package's launcher (no reliance on PATH), each quoted for the host's shell. Every install
// command (`warden hooks install HOST`) writes this line, so a host finds Warden even where
// `warden` is not on PATH.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** POSIX single-quoting: the value is one word whatever it holds. */
export function shellQuote(value: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The package's `bin/warden.js`, found from this compiled file (dist/src/cli/commands). */
export function wardenLauncher(): string {
  return join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..", "bin", "warden.js");
}

/** `'<node>' '<…/bin/warden.js>' hooks <host>`: what a host runs for one hook event. */
export function hookCommand(host: string): string {
  return [process.execPath, wardenLauncher(), "hooks", host].map(shellQuote).join(" ");
}
