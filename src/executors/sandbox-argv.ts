// The command line of each sandbox tier around an already resolved binary. Nothing here
// goes through a shell: every element is one argv entry of prlimit, bwrap or the
// container engine. A tier that cannot be provided is an error value, never a weaker run.
import { existsSync, realpathSync } from "node:fs";
import { isAbsolute } from "node:path";
import {
  bwrapPath,
  bwrapUnavailable,
  containerUnavailable,
  prlimitArgs,
  type SandboxOptions,
  type SandboxPlan,
  systemBinds,
} from "./sandbox.js";

export interface SandboxCommand {
  file: string;
  args: string[];
  /** argv[0] to show the program (only meaningful for the bare process tier). */
  argv0?: string;
}

export type SandboxBuild =
  | { ok: true; command: SandboxCommand }
  /** `invalid`: the request itself is malformed; `unavailable`: this machine cannot provide it. */
  | { ok: false; reason?: "invalid"; message: string };

export interface CommandInput {
  /** Real path of the binary (host view). */
  binary: string;
  /** The name argv[0] had (kept as argv0; the container tier runs it inside the image). */
  name: string;
  args: readonly string[];
  cwd: string;
  workDir: string;
  env: Readonly<Record<string, string>>;
}

const PRLIMIT = "/usr/bin/prlimit";
const NETWORK_FILES = [
  "/etc/resolv.conf",
  "/etc/hosts",
  "/etc/nsswitch.conf",
  "/etc/ssl",
  "/etc/ca-certificates",
];

function limited(plan: SandboxPlan, argv: readonly string[]): SandboxBuild | string[] {
  const opts = prlimitArgs(plan.limits);
  if (opts.length === 0) return [...argv];
  if (!existsSync(PRLIMIT)) return { ok: false, message: "prlimit (util-linux) is not installed" };
  return [PRLIMIT, ...opts, "--", ...argv];
}

function rootWithoutRunAs(plan: SandboxPlan, o: SandboxOptions): boolean {
  return plan.limits.processes !== undefined && process.getuid?.() === 0 && o.runAs === undefined;
}

function namespaceArgs(plan: SandboxPlan, input: CommandInput): SandboxBuild | string[] {
  const args = ["--unshare-all", "--die-with-parent", "--new-session", ...systemBinds()];
  args.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
  if (plan.network.length > 0) {
    args.push("--share-net");
    for (const f of NETWORK_FILES) if (existsSync(f)) args.push("--ro-bind", f, f);
  }
  args.push("--bind", input.workDir, input.workDir);
  for (const p of plan.paths) {
    let real: string;
    try {
      real = realpathSync(p.path);
    } catch {
      return { ok: false, message: `sandbox path ${p.path} does not exist` };
    }
    args.push(p.writable ? "--bind" : "--ro-bind", real, real);
  }
  // The environment is bwrap's own (already the scrubbed one the executor built): values
  // never appear in an argv, where other processes of the user could read them.
  args.push("--chdir", input.cwd);
  const inner = limited(plan, [input.binary, ...input.args]);
  if (!Array.isArray(inner)) return inner;
  return [...args, "--", ...inner];
}

function containerArgs(plan: SandboxPlan, o: SandboxOptions, input: CommandInput): string[] {
  const c = o.container;
  const l = plan.limits;
  const args = ["run", "--rm", "--read-only", "--tmpfs", "/tmp", "--cap-drop", "ALL"];
  args.push("--security-opt", "no-new-privileges", "--network", plan.network.length > 0 ? "bridge" : "none");
  if (c?.runtime !== undefined) args.push("--runtime", c.runtime);
  if (l.processes !== undefined) args.push("--pids-limit", String(l.processes));
  if (l.memoryBytes !== undefined) args.push("--memory", String(l.memoryBytes));
  if (l.cpuSeconds !== undefined) args.push("--ulimit", `cpu=${l.cpuSeconds}`);
  if (l.fileSizeBytes !== undefined) args.push("--ulimit", `fsize=${l.fileSizeBytes}`);
  if (l.openFiles !== undefined) args.push("--ulimit", `nofile=${l.openFiles}`);
  args.push("--user", o.runAs !== undefined ? `${o.runAs.uid}:${o.runAs.gid}` : "65534:65534");
  args.push("-v", `${input.workDir}:${input.workDir}:rw`);
  for (const p of plan.paths) args.push("-v", `${p.path}:${p.path}:${p.writable ? "rw" : "ro"}`);
  args.push("-w", input.cwd);
  // `-e NAME` takes the value from the engine's environment (the scrubbed one): no value in argv.
  for (const k of Object.keys(input.env)) args.push("-e", k);
  args.push("--", c?.image ?? "", input.name, ...input.args);
  return args;
}

/** The command that runs `input` under `plan`, or why this machine cannot. */
export function sandboxCommand(plan: SandboxPlan, o: SandboxOptions, input: CommandInput): SandboxBuild {
  // Bind paths come from configuration, never the model; still, only plain absolute paths
  // (a ':' would smuggle mount options into the container engine's -v syntax).
  const bad = plan.paths.find((p) => !isAbsolute(p.path) || /[\0:,]/.test(p.path));
  if (bad !== undefined) {
    return { ok: false, reason: "invalid", message: "sandbox paths must be absolute, without ':' or ','" };
  }
  if (rootWithoutRunAs(plan, o)) {
    return { ok: false, message: "a process limit does not bind root: set sandbox.runAs (uid/gid)" };
  }
  if (plan.tier === "process") {
    const argv = limited(plan, [input.binary, ...input.args]);
    if (!Array.isArray(argv)) return argv;
    const [file, ...args] = argv as [string, ...string[]];
    return { ok: true, command: { file, args, ...(file === input.binary ? { argv0: input.name } : {}) } };
  }
  if (plan.tier === "namespace") {
    const why = bwrapUnavailable(o.bwrap);
    if (why !== undefined) return { ok: false, message: `namespace tier unavailable: ${why}` };
    const args = namespaceArgs(plan, input);
    if (!Array.isArray(args)) return args;
    return { ok: true, command: { file: bwrapPath(o.bwrap), args } };
  }
  const why = containerUnavailable(o.container);
  if (why !== undefined) return { ok: false, message: `container tier unavailable: ${why}` };
  const engine = o.container?.engine ?? "";
  return { ok: true, command: { file: engine, args: containerArgs(plan, o, input) } };
}

/** Exit statuses that mean "killed by a resource limit": SIGXCPU and SIGXFSZ, direct or as 128+n. */
export function limitKilled(code: number | null, signal: string | null): boolean {
  return signal === "SIGXCPU" || signal === "SIGXFSZ" || code === 128 + 24 || code === 128 + 25;
}
