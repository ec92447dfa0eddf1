// The command a contained shell call runs on the host (what Warden's rewritten Bash command
// starts, docs/hooks-containment.md): starts the egress proxy on a fresh Unix socket in a
// private 0700 directory, runs bwrap with the coding-agent profile around the in-sandbox
// init (contain-init.js), waits, cleans up and exits with the command's status (128+n for a
// signal). Anything wrong before the command runs exits 126 with the reason on stderr —
// the command never runs uncontained. Loads only node builtins and the contain-* files.
//   node contain-run.js <base64 spec> <base64 command | @file>
import { spawn } from "node:child_process";
import {
  existsSync,
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
import { dirname, join } from "node:path";
import { isWithin } from "./coding-profile-match.js";
import { scrubEnv } from "./contain-env.js";
import { ensureHolder, type Holder, holderDir, sessionProcesses } from "./contain-holder.js";
import { containArgv, specProblem } from "./contain-profile.js";
import { type EgressProxy, startEgressProxy } from "./contain-proxy.js";
import { type ContainSpec, decodeSpec } from "./contain-spec.js";
import { absentProtected, removeCreated, setWatched, watched } from "./contain-sweep.js";

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

/** The session's holder and its directories, when the spec asks to share (spec.nsenter). */
interface Shared {
  holder: Holder;
  dir: string;
  gateDir: string;
}

async function sharedOf(spec: ContainSpec): Promise<Shared | undefined> {
  if (spec.nsenter === undefined) return undefined;
  const dir = holderDir(spec.sessionTmp);
  privateDir(dir);
  const gateDir = join(dir, "gate");
  privateDir(gateDir);
  const holder = await ensureHolder(spec.bwrap, dir);
  if (holder === undefined)
    process.stderr.write("Warden containment: no session namespace; this call runs in its own\n");
  return holder === undefined ? undefined : { holder, dir, gateDir };
}

/** The command line: bwrap, or bwrap inside the holder's namespaces. */
function commandLine(spec: ContainSpec, argv: string[], shared: Shared | undefined): [string, string[]] {
  const inner = [...argv, "--info-fd", "3", "--", spec.node, spec.init, spec.shell];
  if (shared === undefined || spec.nsenter === undefined) return [spec.bwrap, inner];
  const ns = ["--target", String(shared.holder.pid), "--user", "--mount", "--net", "--pid"];
  return [spec.nsenter, [...ns, "--preserve-credentials", "--", spec.bwrap, ...inner]];
}

/** The call's final directory for the host shell (spec.cwdFile), when it lies in the workspace. */
function carryCwd(spec: ContainSpec, written: string): void {
  if (spec.cwdFile === undefined) return;
  try {
    const cwd = readFileSync(written, "utf8").trim();
    const st = cwd.startsWith("/") ? lstatSync(cwd, { throwIfNoEntry: false }) : undefined;
    if (st?.isDirectory() && isWithin(cwd, realpathSync(spec.workspace)))
      writeFileSync(spec.cwdFile, cwd, { mode: 0o600 });
  } catch {
    // No directory recorded (the command exited early): the host shell stays where it was.
  }
}

/** Runs the sandbox; `started`: bwrap reported the sandbox up (its --info-fd 3), so the command ran. */
/**
 * nsenter stops itself when its child is stopped (the session gate, contain-gate.ts) and
 * resumes it only when continued itself: while the gate is open, a stopped nsenter is continued.
 */
function keepGoing(pid: number | undefined, gateDir: string | undefined): NodeJS.Timeout | undefined {
  if (pid === undefined || gateDir === undefined) return undefined;
  const t = setInterval(() => {
    try {
      const state = /\) (\S)/.exec(readFileSync(`/proc/${pid}/stat`, "utf8"))?.[1];
      if (state === "T" && !existsSync(join(gateDir, "frozen"))) process.kill(pid, "SIGCONT");
    } catch {
      // Gone.
    }
  }, 200);
  t.unref();
  return t;
}

function runChild(
  file: string,
  args: string[],
  gateDir?: string,
): Promise<{ status: number; started: boolean }> {
  const child = spawn(file, args, {
    stdio: ["inherit", "inherit", "inherit", "pipe"],
    env: scrubEnv(process.env),
  });
  const watch = keepGoing(child.pid, gateDir);
  let started = false;
  child.stdio[3]?.on("data", () => {
    started = true;
  });
  child.stdio[3]?.on("error", () => undefined);
  for (const s of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(s, () => child.kill(s));
  return new Promise((resolve) => {
    child.once("error", (err) => {
      process.stderr.write(`Warden containment: ${err.message}\n`);
      resolve({ status: 126, started });
    });
    // "exit", not "close": a process the call left running may hold the pipes.
    child.once("exit", (code, signal) => {
      clearInterval(watch);
      child.stdio[3]?.destroy();
      resolve({ status: statusOf(code, signal), started });
    });
  });
}

/** After the call: what it created at protected paths moved aside — now, and while its processes live on. */
function sweep(absent: string[], shared: Shared | undefined): void {
  removeCreated(absent);
  if (shared === undefined) return;
  const all = [...watched(shared.dir), ...absent];
  removeCreated(all);
  setWatched(shared.dir, sessionProcesses(shared.holder).length > 0 ? all : []);
}

async function run(spec: ContainSpec, command: string): Promise<number> {
  privateDir(dirname(spec.sessionTmp));
  privateDir(spec.sessionTmp);
  privateDir(dirname(spec.egressLog));
  const dir = mkdtempSync(join(tmpdir(), "warden-egress-"));
  const part = `${spec.egressLog}-${process.pid}.part`;
  let proxy: EgressProxy | undefined;
  let absent: string[] = [];
  let shared: Shared | undefined;
  const cwdFile = join(dir, "cwd");
  try {
    const socket = join(dir, "egress.sock");
    const commandFile = join(dir, "command");
    writeFileSync(commandFile, command, { mode: 0o600 });
    writeFileSync(cwdFile, "", { mode: 0o600 });
    shared = await sharedOf(spec);
    if (shared !== undefined) removeCreated(watched(shared.dir));
    proxy = await startEgressProxy({ socket, egress: spec.egress, log: part });
    const argv = containArgv(spec, {
      socket,
      cwd: process.cwd(),
      commandFile,
      ...(spec.cwdFile !== undefined ? { cwdFile } : {}),
      ...(shared !== undefined ? { shared: true, gateDir: shared.gateDir } : {}),
    });
    // After containArgv: the host settings placeholders it creates are Warden's, not the call's.
    absent = absentProtected(spec);
    let ran = await runChild(...commandLine(spec, argv, shared), shared?.gateDir);
    if (!ran.started && shared !== undefined) {
      // The holder ended between its check and nsenter (idle): the command did not run; run it in namespaces of its own.
      shared = undefined;
      const own = containArgv(spec, { socket, cwd: process.cwd(), commandFile, cwdFile });
      ran = await runChild(...commandLine(spec, own, undefined));
    }
    carryCwd(spec, cwdFile);
    return ran.status;
  } finally {
    sweep(absent, shared);
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
