// The process executor: runs exactly the argv a contract's `exec` template
// produced, never through a shell, so metacharacters in arguments are inert
// bytes. The binary must resolve (through every symlink) to a file under a
// trusted prefix; the environment is rebuilt from an allow-list with secret-
// looking names held back; the working directory is confined; output is capped.
// Each run gets its own process group so a timeout kills the grandchildren too.
import { type ChildProcess, spawn } from "node:child_process";
import { constants, existsSync, realpathSync, statSync } from "node:fs";
import { access, realpath, stat } from "node:fs/promises";
import { isAbsolute, join, sep } from "node:path";
import { ExecutorError } from "../contracts/index.js";
import type { Invocation } from "./evidence.js";
import {
  type AttemptOutcome,
  abortCode,
  type CallOptions,
  type ExecutionResult,
  type ExecutorDeps,
  type ExecutorErrorCode,
  runBound,
  type ToolIdentity,
} from "./runtime.js";
import { planSandbox, type SandboxOptions, type SandboxRequest, sandboxConfigProblem } from "./sandbox.js";
import { limitKilled, type SandboxCommand, sandboxCommand } from "./sandbox-argv.js";
import { SecretMasker } from "./secret-mask.js";

export interface ProcessSpec {
  /** argv[0] is a bare name (searched in the trusted prefixes) or an absolute path under one. */
  argv: readonly string[];
  /** Working directory relative to the executor's workDir (default: workDir itself). */
  cwd?: string;
  /** Environment variable names the contract lets through. */
  env?: readonly string[];
  stdin?: string | Uint8Array;
  /** Exit codes that count as success (default [0]). */
  okExitCodes?: readonly number[];
}

export interface ProcessBinding extends ToolIdentity {
  build(parameters: Readonly<Record<string, unknown>>): ProcessSpec;
  /** The contract's risk tier (selects a minimum sandbox tier through `sandbox.byRiskTier`). */
  riskTier?: string;
  /** What the contract asks of the sandbox (tier, limits, network destinations, paths). */
  sandbox?: SandboxRequest;
}

export interface ProcessExecutorOptions {
  /** The directory processes run in (and whose subdirectories they may use). */
  workDir: string;
  /** Where binaries may live (default /usr/bin, /bin, /usr/local/bin). */
  trustedPrefixes?: readonly string[];
  /** Source of variable values (default process.env). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Secret-looking names the deployment explicitly lets through when a contract asks for them. */
  allowSecretEnv?: readonly string[];
  maxStdoutBytes?: number;
  maxStderrBytes?: number;
  maxTimeoutMs?: number;
  /** Sandbox tiers and resource limits (docs/sandbox.md); absent: the process tier, no limits. */
  sandbox?: SandboxOptions;
}

export interface ProcessOutput {
  exitCode: number | null;
  signal: string | null;
  stdout: Buffer;
  stderr: Buffer;
}

export const DEFAULT_TRUSTED_PREFIXES: readonly string[] = ["/usr/bin", "/bin", "/usr/local/bin"];
/** Names that look like credentials are withheld unless the deployment names them. */
export const SECRET_ENV_PATTERN = /(SECRET|TOKEN|PASSW|KEY|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|API_?KEY)/i;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

function within(root: string, p: string): boolean {
  return p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);
}

function deny(code: ExecutorErrorCode, message: string): never {
  throw new ExecutorError(code, message);
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // ESRCH: the group is already gone.
  }
}

export class ProcessExecutor {
  readonly #workReal: string;
  readonly #prefixes: readonly string[];
  readonly #prefixReals: readonly string[];
  readonly #env: Readonly<Record<string, string | undefined>>;
  readonly #allowSecret: ReadonlySet<string>;
  readonly #maxOut: number;
  readonly #maxErr: number;
  readonly #maxTimeoutMs: number;
  readonly #deps: ExecutorDeps;
  readonly #sandbox: SandboxOptions;

  constructor(options: ProcessExecutorOptions, deps: ExecutorDeps = {}) {
    if (
      !isAbsolute(options.workDir) ||
      !existsSync(options.workDir) ||
      !statSync(options.workDir).isDirectory()
    ) {
      throw new ExecutorError("ERR_EXEC_CONFIG_INVALID", "workDir must be an existing absolute directory");
    }
    this.#workReal = realpathSync(options.workDir);
    this.#prefixes = options.trustedPrefixes ?? DEFAULT_TRUSTED_PREFIXES;
    if (this.#prefixes.some((p) => !isAbsolute(p))) {
      throw new ExecutorError("ERR_EXEC_CONFIG_INVALID", "trusted prefixes must be absolute");
    }
    this.#prefixReals = [...new Set(this.#prefixes.filter((p) => existsSync(p)).map((p) => realpathSync(p)))];
    this.#env = options.env ?? process.env;
    this.#allowSecret = new Set(options.allowSecretEnv ?? []);
    this.#maxOut = options.maxStdoutBytes ?? 1024 * 1024;
    this.#maxErr = options.maxStderrBytes ?? 256 * 1024;
    this.#maxTimeoutMs = options.maxTimeoutMs ?? 60_000;
    this.#deps = deps;
    this.#sandbox = options.sandbox ?? {};
    const problem = sandboxConfigProblem(this.#sandbox);
    if (problem !== undefined) throw new ExecutorError("ERR_EXEC_CONFIG_INVALID", problem);
  }

  execute(
    ticket: unknown,
    binding: ProcessBinding,
    opts: CallOptions = {},
  ): Promise<ExecutionResult<ProcessOutput>> {
    return runBound(
      ticket,
      {
        executor: "process",
        binding,
        defaultTaint: "tool-output",
        maxTimeoutMs: this.#maxTimeoutMs,
        attempt: (spec, { signal }) => this.#run(spec, signal, binding),
      },
      this.#deps,
      opts,
    );
  }

  /** Resolves argv[0] to a real path under a trusted prefix. */
  async resolveBinary(name: string): Promise<string> {
    if (name.length === 0 || name.includes("\0")) deny("ERR_EXEC_BINARY_UNTRUSTED", "invalid binary name");
    let candidates: string[];
    if (name.includes("/")) {
      if (!isAbsolute(name)) deny("ERR_EXEC_BINARY_UNTRUSTED", "relative binary paths are not allowed");
      candidates = [name];
    } else {
      candidates = this.#prefixes.map((p) => join(p, name));
    }
    for (const c of candidates) {
      let real: string;
      try {
        real = await realpath(c);
      } catch {
        continue;
      }
      if (!this.#prefixReals.some((p) => within(p, real))) {
        deny("ERR_EXEC_BINARY_UNTRUSTED", `${name} resolves outside the trusted prefixes`);
      }
      const st = await stat(real);
      if (!st.isFile()) continue;
      try {
        await access(real, constants.X_OK);
      } catch {
        continue;
      }
      return real;
    }
    if (name.includes("/") && !this.#prefixReals.some((p) => within(p, name))) {
      deny("ERR_EXEC_BINARY_UNTRUSTED", `${name} is outside the trusted prefixes`);
    }
    return deny("ERR_EXEC_BINARY_NOT_FOUND", `${name} not found in the trusted prefixes`);
  }

  /** The scrubbed environment: allowed names only, secrets held back, PATH pinned to the trusted prefixes. */
  environment(names: readonly string[]): Record<string, string> {
    const env: Record<string, string> = {};
    for (const n of names) {
      if (!ENV_NAME.test(n) || n === "PATH") continue;
      if (SECRET_ENV_PATTERN.test(n) && !this.#allowSecret.has(n)) continue;
      const v = this.#env[n];
      if (v !== undefined) env[n] = v;
    }
    env.PATH = this.#prefixes.join(":");
    return env;
  }

  async #cwd(rel: string | undefined): Promise<string> {
    if (rel === undefined || rel === "" || rel === ".") return this.#workReal;
    if (rel.includes("\0")) deny("ERR_EXEC_CWD_OUTSIDE", "invalid working directory");
    const p = isAbsolute(rel) ? rel : join(this.#workReal, rel);
    let real: string;
    try {
      real = await realpath(p);
    } catch {
      return deny("ERR_EXEC_CWD_OUTSIDE", "working directory does not exist");
    }
    if (!within(this.#workReal, real)) deny("ERR_EXEC_CWD_OUTSIDE", "working directory is outside workDir");
    if (!(await stat(real)).isDirectory())
      deny("ERR_EXEC_CWD_OUTSIDE", "working directory is not a directory");
    return real;
  }

  /** The command for the call's sandbox tier, or a coded refusal (never a weaker tier). */
  #command(
    binding: ProcessBinding,
    input: {
      binary: string;
      name: string;
      args: readonly string[];
      cwd: string;
      env: Record<string, string>;
    },
  ): SandboxCommand | { code: ExecutorErrorCode; message: string } {
    const plan = planSandbox(this.#sandbox, {
      tool: binding.name,
      riskTier: binding.riskTier,
      request: binding.sandbox,
    });
    const built = sandboxCommand(plan, this.#sandbox, { ...input, workDir: this.#workReal });
    if (built.ok) return built.command;
    const code = built.reason === "invalid" ? "ERR_EXEC_PARAMS_INVALID" : "ERR_EXEC_SANDBOX_UNAVAILABLE";
    return { code, message: built.message };
  }

  async #run(
    spec: ProcessSpec,
    signal: AbortSignal,
    binding: ProcessBinding,
  ): Promise<AttemptOutcome<ProcessOutput>> {
    const [name, ...args] = spec.argv;
    if (name === undefined) {
      return { invocation: null, error: { code: "ERR_EXEC_PARAMS_INVALID", message: "empty argv" } };
    }
    if (spec.argv.some((a) => typeof a !== "string" || a.includes("\0"))) {
      return {
        invocation: null,
        error: { code: "ERR_EXEC_PARAMS_INVALID", message: "argv elements must be strings without NUL" },
      };
    }
    const env = this.environment(spec.env ?? []);
    const masker = new SecretMasker(
      Object.entries(env)
        .filter(([n]) => SECRET_ENV_PATTERN.test(n))
        .map(([, v]) => v),
    );
    const inv: Invocation & { kind: "process" } = {
      kind: "process",
      binary: name,
      argv: [...spec.argv],
      cwd: this.#workReal,
      env_names: Object.keys(env).sort(),
    };
    let binary: string;
    try {
      binary = await this.resolveBinary(name);
      inv.binary = binary;
      inv.cwd = await this.#cwd(spec.cwd);
    } catch (err) {
      if (err instanceof ExecutorError) {
        return { invocation: inv, error: { code: err.code as ExecutorErrorCode, message: err.message } };
      }
      throw err;
    }
    if (signal.aborted) return { invocation: inv, error: { code: abortCode(signal), message: "aborted" } };
    const command = this.#command(binding, { binary, name, args, cwd: inv.cwd, env });
    if ("code" in command) return { invocation: inv, error: command };
    const runAs = this.#sandbox.runAs;

    return new Promise((resolve) => {
      const child = spawn(command.file, command.args, {
        ...(command.argv0 !== undefined ? { argv0: command.argv0 } : {}),
        ...(runAs !== undefined ? { uid: runAs.uid, gid: runAs.gid } : {}),
        cwd: inv.cwd,
        env,
        shell: false,
        detached: true,
        stdio: [spec.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
        windowsHide: true,
      });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let outBytes = 0;
      let errBytes = 0;
      let failure: { code: ExecutorErrorCode; message: string } | undefined;
      const stop = (f: { code: ExecutorErrorCode; message: string }) => {
        failure ??= f;
        killGroup(child);
      };
      const onAbort = () => stop({ code: abortCode(signal), message: "process killed" });
      signal.addEventListener("abort", onAbort, { once: true });
      child.stdout?.on("data", (c: Buffer) => {
        outBytes += c.length;
        if (outBytes > this.#maxOut)
          stop({ code: "ERR_EXEC_OUTPUT_TOO_LARGE", message: `stdout over ${this.#maxOut} bytes` });
        else out.push(c);
      });
      child.stderr?.on("data", (c: Buffer) => {
        errBytes += c.length;
        if (errBytes > this.#maxErr)
          stop({ code: "ERR_EXEC_OUTPUT_TOO_LARGE", message: `stderr over ${this.#maxErr} bytes` });
        else err.push(c);
      });
      if (spec.stdin !== undefined && child.stdin) {
        child.stdin.on("error", () => {});
        child.stdin.end(spec.stdin);
      }
      let spawnError: Error | undefined;
      child.on("error", (e) => {
        spawnError = e;
      });
      child.on("close", (code, sig) => {
        signal.removeEventListener("abort", onAbort);
        // Leave nothing of the run behind, even on a clean exit.
        killGroup(child);
        // A secret the deployment let through must not come back to the agent if the tool prints it.
        const stdout = masker.bytes(Buffer.concat(out));
        const stderr = masker.bytes(Buffer.concat(err));
        const output: ProcessOutput = {
          exitCode: code,
          signal: sig,
          stdout: stdout.bytes,
          stderr: stderr.bytes,
        };
        const masked = stdout.count + stderr.count;
        const base = {
          invocation: inv,
          raw: output.stdout,
          output,
          exit: { code, signal: sig },
          ...(masked > 0 ? { masked } : {}),
        };
        if (failure !== undefined) return resolve({ ...base, error: failure });
        if (spawnError !== undefined) {
          return resolve({
            invocation: inv,
            error: { code: "ERR_EXEC_IO", message: masker.text(spawnError.message) },
          });
        }
        const ok = code !== null && (spec.okExitCodes ?? [0]).includes(code);
        if (!ok && limitKilled(code, sig)) {
          return resolve({
            ...base,
            error: {
              code: "ERR_EXEC_RESOURCE_LIMIT",
              message: `killed by a resource limit (${sig ?? code})`,
            },
          });
        }
        resolve(
          ok ? base : { ...base, error: { code: "ERR_EXEC_TOOL_FAILED", message: `exit ${code ?? sig}` } },
        );
      });
    });
  }
}
