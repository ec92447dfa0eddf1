// The command a contained shell call runs on the host (what Warden's rewritten Bash command
// starts, docs/hooks-containment.md): starts the egress proxy on a fresh Unix socket in a
// private 0700 directory, runs bwrap with the coding-agent profile around the in-sandbox
// init (contain-init.js), waits, cleans up and exits with the command's status (128+n for a
// signal). Anything wrong before the command runs exits 126 with the reason on stderr —
// the command never runs uncontained. Loads only node builtins and the contain-* files.
//   node contain-run.js <base64 spec> <base64 command | @file>
import { spawn } from "node:child_process";
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { constants, tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { isWithin } from "./coding-profile-match.js";
import { scrubEnv } from "./contain-env.js";
import { containArgv, HOST_SETTINGS_DIRS, specProblem } from "./contain-profile.js";
import { type EgressProxy, startEgressProxy } from "./contain-proxy.js";
import { type ContainSpec, decodeSpec } from "./contain-spec.js";

function fail(why: string): never {
  process.stderr.write(`Warden containment: ${why}; the command did not run\n`);
  process.exit(126);
}

/** A directory only this user can enter: created 0700, refused if it is a link or anyone else's. */
export function privateDir(path: string): void {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  const st = lstatSync(path);
  const uid = process.getuid?.();
  if (!st.isDirectory()) throw new Error(`${path} is not a directory`);
  if (uid !== undefined && st.uid !== uid) throw new Error(`${path} belongs to another user`);
  if ((st.mode & 0o077) !== 0) throw new Error(`${path} is open to other users`);
}

function statusOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  return 128 + ((signal !== null ? constants.signals[signal] : undefined) ?? 9);
}

const MAX_COMMAND_BYTES = 16 * 1024 * 1024;

/** The command: base64, or `@file` (a long one the engine stashed in its hooks directory; removed once read). */
export function readCommand(word: string): string {
  if (!word.startsWith("@")) return Buffer.from(word, "base64").toString("utf8");
  const file = word.slice(1);
  if (statSync(file).size > MAX_COMMAND_BYTES) throw new Error("the command file is too large");
  const text = readFileSync(file, "utf8");
  unlinkSync(file);
  return text;
}

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

async function run(spec: ContainSpec, command: string): Promise<number> {
  privateDir(dirname(spec.sessionTmp));
  privateDir(spec.sessionTmp);
  privateDir(dirname(spec.egressLog));
  const dir = mkdtempSync(join(tmpdir(), "warden-egress-"));
  const part = `${spec.egressLog}-${process.pid}.part`;
  let proxy: EgressProxy | undefined;
  let absent: string[] = [];
  try {
    const socket = join(dir, "egress.sock");
    const commandFile = join(dir, "command");
    writeFileSync(commandFile, command, { mode: 0o600 });
    proxy = await startEgressProxy({ socket, egress: spec.egress, log: part });
    const argv = containArgv(spec, { socket, cwd: process.cwd(), commandFile });
    // After containArgv: the host settings placeholders it creates are Warden's, not the call's.
    absent = absentProtected(spec);
    const child = spawn(spec.bwrap, [...argv, "--", spec.node, spec.init, spec.shell], {
      stdio: "inherit",
      env: scrubEnv(process.env),
    });
    for (const s of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(s, () => child.kill(s));
    return await new Promise<number>((resolve) => {
      child.once("error", (err) => {
        process.stderr.write(`Warden containment: ${err.message}\n`);
        resolve(126);
      });
      child.once("exit", (code, signal) => resolve(statusOf(code, signal)));
    });
  } finally {
    removeCreated(absent);
    await proxy?.close();
    try {
      renameSync(part, `${spec.egressLog}-${process.pid}.jsonl`);
    } catch {
      // No destination was recorded (the file may not exist).
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(argv: readonly string[]): Promise<void> {
  const [specB64, b64] = argv;
  if (specB64 === undefined || b64 === undefined) fail("usage: contain-run.js <spec> <command>");
  const spec = decodeSpec(specB64);
  if (typeof spec === "string") fail(spec);
  const problem = specProblem(spec);
  if (problem !== undefined) fail(problem);
  try {
    process.exitCode = await run(spec, readCommand(b64));
  } catch (err) {
    fail(err instanceof Error ? err.message : String(err));
  }
}

await main(process.argv.slice(2));
