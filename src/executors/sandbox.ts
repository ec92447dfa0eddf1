// Sandbox tiers for the process executor (OATS §9.1, §9.2). Three tiers of increasing
// isolation, chosen per call as the strictest of what the deployment's default, the
// contract's risk tier, the deployment's per-tool setting and the binding ask for:
//   process    the argv under resource limits (prlimit: CPU, address space, file size,
//              open files, processes), in its own process group;
//   namespace  bubblewrap (`bwrap`): new user, PID, IPC, UTS, cgroup and network
//              namespaces (no network unless the call declares destinations), read-only
//              /usr, private /tmp, minimal /dev and /proc, and only the work directory
//              (read-write) and the declared paths bound; limits applied inside;
//   container  docker or podman (`--network none` unless destinations are declared,
//              read-only root, tmpfs /tmp, the work directory only, pids/memory/CPU
//              limits, an optional OCI runtime such as gVisor's `runsc`).
// A tier is never silently weakened: a call whose tier this machine cannot provide is
// refused with ERR_EXEC_SANDBOX_UNAVAILABLE before anything runs.
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, readlinkSync } from "node:fs";
import { isAbsolute } from "node:path";

export const SANDBOX_TIERS = ["process", "namespace", "container"] as const;
export type SandboxTier = (typeof SANDBOX_TIERS)[number];

/** OATS §9.2 per-process limits; each absent one is not set. */
export interface ResourceLimits {
  /** CPU seconds (RLIMIT_CPU: SIGXCPU, then SIGKILL). */
  cpuSeconds?: number;
  /** Address space in bytes (RLIMIT_AS: allocations fail). */
  memoryBytes?: number;
  /** Largest file the process may write, bytes (RLIMIT_FSIZE: SIGXFSZ). */
  fileSizeBytes?: number;
  /** Open file descriptors (RLIMIT_NOFILE). */
  openFiles?: number;
  /** Processes of the user the tool runs as (RLIMIT_NPROC; not binding for root). */
  processes?: number;
}

/** What one call asks of the sandbox (from the binding or the deployment's per-tool map). */
export interface SandboxRequest {
  tier?: SandboxTier;
  limits?: ResourceLimits;
  /** Declared network destinations; none means no network in the namespace and container tiers. */
  network?: readonly string[];
  /** Extra absolute paths bound into the namespace/container (read-only unless writable). */
  paths?: readonly { path: string; writable?: boolean }[];
}

export interface ContainerOptions {
  /** `docker` or `podman` (absolute path or a name under the trusted prefixes). */
  engine: string;
  image: string;
  /** OCI runtime, e.g. `runsc` (gVisor) or a Firecracker-backed runtime such as `kata-fc`. */
  runtime?: string;
}

/** Deployment settings (ProcessExecutorOptions.sandbox). */
export interface SandboxOptions {
  /** Tier of every call that asks for nothing stricter (default `process`). */
  tier?: SandboxTier;
  /** Minimum tier per contract risk tier, e.g. `{ high: "namespace", critical: "container" }`. */
  byRiskTier?: Readonly<Partial<Record<string, SandboxTier>>>;
  /** Per-tool (contract name) requirements. */
  tools?: Readonly<Record<string, SandboxRequest>>;
  /** Limits applied to every call (a call's own limits can only lower them). */
  limits?: ResourceLimits;
  /** Path of bwrap (default: searched in /usr/bin, /bin). */
  bwrap?: string;
  container?: ContainerOptions;
  /** Run tools as this uid/gid (needed for the process limit when Warden runs as root). */
  runAs?: { uid: number; gid: number };
}

export interface SandboxPlan {
  tier: SandboxTier;
  limits: ResourceLimits;
  network: readonly string[];
  paths: readonly { path: string; writable: boolean }[];
}

const RANK: Record<SandboxTier, number> = { process: 0, namespace: 1, container: 2 };

function stricter(a: SandboxTier, b: SandboxTier | undefined): SandboxTier {
  return b !== undefined && RANK[b] > RANK[a] ? b : a;
}

function lower(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

const LIMIT_KEYS = ["cpuSeconds", "memoryBytes", "fileSizeBytes", "openFiles", "processes"] as const;

/** The strictest combination of the limits given (a lower number wins). */
export function mergeLimits(...all: readonly (ResourceLimits | undefined)[]): ResourceLimits {
  const out: ResourceLimits = {};
  for (const k of LIMIT_KEYS) {
    let v: number | undefined;
    for (const l of all) v = lower(v, l?.[k]);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/** Plans one call: the strictest tier and limits of every source. */
export function planSandbox(
  options: SandboxOptions,
  call: { tool: string; riskTier?: string | undefined; request?: SandboxRequest | undefined },
): SandboxPlan {
  const perTool = options.tools?.[call.tool];
  let tier: SandboxTier = options.tier ?? "process";
  if (call.riskTier !== undefined) tier = stricter(tier, options.byRiskTier?.[call.riskTier]);
  tier = stricter(tier, perTool?.tier);
  tier = stricter(tier, call.request?.tier);
  const paths = [...(perTool?.paths ?? []), ...(call.request?.paths ?? [])].map((p) => ({
    path: p.path,
    writable: p.writable === true,
  }));
  return {
    tier,
    limits: mergeLimits(options.limits, perTool?.limits, call.request?.limits),
    network: [...(perTool?.network ?? []), ...(call.request?.network ?? [])],
    paths,
  };
}

/** Validates deployment settings; returns a message for the first problem. */
export function sandboxConfigProblem(o: SandboxOptions): string | undefined {
  const tiers = [
    o.tier,
    ...Object.values(o.byRiskTier ?? {}),
    ...Object.values(o.tools ?? {}).map((t) => t.tier),
  ];
  if (tiers.some((t) => t !== undefined && !SANDBOX_TIERS.includes(t))) return "unknown sandbox tier";
  for (const l of [o.limits, ...Object.values(o.tools ?? {}).map((t) => t.limits)]) {
    for (const k of LIMIT_KEYS) {
      const v = l?.[k];
      if (v !== undefined && (!Number.isSafeInteger(v) || v < 1))
        return `limit ${k} must be a positive integer`;
    }
  }
  for (const t of Object.values(o.tools ?? {})) {
    if ((t.paths ?? []).some((p) => !isAbsolute(p.path) || /[\0:,]/.test(p.path)))
      return "sandbox paths must be absolute, without ':' or ','";
  }
  if (o.runAs !== undefined && (!Number.isSafeInteger(o.runAs.uid) || !Number.isSafeInteger(o.runAs.gid))) {
    return "runAs needs integer uid and gid";
  }
  return undefined;
}

/**
 * prlimit's options for the limits: soft = hard, so the process cannot raise them, except
 * CPU, whose hard limit is one second later so the kernel sends SIGXCPU (reported as
 * ERR_EXEC_RESOURCE_LIMIT) before the SIGKILL that ends a process ignoring it.
 */
export function prlimitArgs(l: ResourceLimits): string[] {
  const out: string[] = [];
  if (l.cpuSeconds !== undefined) out.push(`--cpu=${l.cpuSeconds}:${l.cpuSeconds + 1}`);
  if (l.memoryBytes !== undefined) out.push(`--as=${l.memoryBytes}`);
  if (l.fileSizeBytes !== undefined) out.push(`--fsize=${l.fileSizeBytes}`);
  if (l.openFiles !== undefined) out.push(`--nofile=${l.openFiles}`);
  if (l.processes !== undefined) out.push(`--nproc=${l.processes}`);
  return out;
}

/** The top-level directories of the system view: symlinks kept as symlinks, directories bound read-only. */
export function systemBinds(): string[] {
  const out = ["--ro-bind", "/usr", "/usr"];
  for (const d of ["/bin", "/lib", "/lib64", "/sbin", "/lib32"]) {
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(d);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) out.push("--symlink", readlinkSync(d), d);
    else if (st.isDirectory()) out.push("--ro-bind", d, d);
  }
  return out;
}

/** Whether `bwrap` at `path` can build the namespaces the tier needs (probed once per path). */
const probes = new Map<string, string | undefined>();

function probe(key: string, run: () => void): string | undefined {
  if (!probes.has(key)) {
    try {
      run();
      probes.set(key, undefined);
    } catch (err) {
      const e = err as { code?: string; stderr?: Buffer; message?: string };
      const why = e.stderr?.toString("utf8").trim() || e.code || e.message || "failed";
      probes.set(key, why.slice(0, 200));
    }
  }
  return probes.get(key);
}

/** Why the namespace tier is unavailable (undefined: it works). */
export function bwrapUnavailable(bwrap: string | undefined): string | undefined {
  const path = bwrap ?? ["/usr/bin/bwrap", "/bin/bwrap"].find((p) => existsSync(p));
  if (path === undefined || !existsSync(path)) return "bwrap is not installed (Debian package bubblewrap)";
  return probe(`bwrap:${path}`, () =>
    execFileSync(path, ["--unshare-all", "--die-with-parent", ...systemBinds(), "--", "/usr/bin/true"], {
      stdio: ["ignore", "ignore", "pipe"],
      timeout: 10_000,
    }),
  );
}

/** The bwrap path the tier uses. */
export function bwrapPath(bwrap: string | undefined): string {
  return bwrap ?? ["/usr/bin/bwrap", "/bin/bwrap"].find((p) => existsSync(p)) ?? "/usr/bin/bwrap";
}

/** Why the container tier is unavailable: no engine binary, or an engine that cannot run containers. */
export function containerUnavailable(c: ContainerOptions | undefined): string | undefined {
  if (c === undefined) return "no container engine configured (sandbox.container)";
  if (c.image.length === 0) return "sandbox.container.image is empty";
  if (!isAbsolute(c.engine)) return "sandbox.container.engine must be an absolute path";
  if (!existsSync(c.engine)) return `${c.engine} is not installed`;
  return probe(`container:${c.engine}`, () =>
    execFileSync(c.engine, ["info", "--format", "{{.ServerVersion}}"], {
      stdio: ["ignore", "ignore", "pipe"],
      timeout: 10_000,
    }),
  );
}
