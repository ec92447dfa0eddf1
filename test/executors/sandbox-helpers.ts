// Shared set-up of the sandbox tests: a work directory the tool's user can write, the
// tool's user (nobody when the tests run as root, since RLIMIT_NPROC does not bind root),
// and one call through the real ProcessExecutor with a Gate-shaped ticket.
import { chmodSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ProcessBinding,
  ProcessExecutor,
  type ProcessSpec,
  type SandboxOptions,
  type SandboxRequest,
} from "../../src/executors/index.js";
import { mint } from "./helpers.js";

export const IS_ROOT = process.getuid?.() === 0;
/** Under root the tools run as nobody, so the process limit binds. */
export const RUN_AS = IS_ROOT ? { uid: 65534, gid: 65534 } : undefined;

export function workDir(): string {
  const base = mkdtempSync(join(tmpdir(), "warden-sbx-"));
  const work = join(base, "work");
  mkdirSync(work);
  // The tool's user (nobody under root) must be able to write its work directory.
  chmodSync(base, 0o755);
  chmodSync(work, 0o777);
  return work;
}

export function binding(spec: ProcessSpec, extra: { sandbox?: SandboxRequest; riskTier?: string } = {}) {
  const b: ProcessBinding = { name: "tool", version: "1.0.0", build: () => spec, ...extra };
  return b;
}

export function runIn(
  work: string,
  sandbox: SandboxOptions,
  spec: ProcessSpec,
  extra: { sandbox?: SandboxRequest; riskTier?: string; timeoutMs?: number } = {},
) {
  const ex = new ProcessExecutor(
    { workDir: work, sandbox: { ...(RUN_AS !== undefined ? { runAs: RUN_AS } : {}), ...sandbox } },
    {},
  );
  const { timeoutMs, ...b } = extra;
  return ex.execute(mint("tool", {}, { toolClass: "shell", action: "exec" }), binding(spec, b), {
    timeoutMs: timeoutMs ?? 30_000,
  });
}

export const text = (b: Buffer | undefined) => b?.toString("utf8") ?? "";
