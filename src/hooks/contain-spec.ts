// What the engine hands the sandbox runner for one contained shell call: the placed
// coding-agent profile and the call's paths, as one base64 JSON argument of the rewritten
// command (the original command is a second, separate base64 argument — never shell
// syntax). Checked by hand, not with zod: the runner starts for every shell call and loads
// only node builtins and these files.

/** Everything contain-run.ts needs besides the command. */
export interface ContainSpec {
  v: 1;
  /** bwrap binary (absolute). */
  bwrap: string;
  /** The Node binary and the in-sandbox init (absolute). */
  node: string;
  init: string;
  /** The shell that runs the command inside (bash unless the user's shell is zsh/sh). */
  shell: string;
  home: string;
  workspace: string;
  /** Warden's state directories: invisible (an empty tmpfs) in the sandbox. */
  stateDirs: string[];
  /** Credential locations (absolute): masked where they exist. */
  credentials: string[];
  /** Never-writable locations (absolute): bound read-only where they exist. */
  protectedPaths: string[];
  /** Extra read-only binds (Warden's own package when it lies in the workspace). */
  readOnly: string[];
  /** The egress allowlist (names, `*.suffix`, `host:port`). */
  egress: string[];
  /** The session's private /tmp on the host (created 0700 by the runner). */
  sessionTmp: string;
  /** The file the proxy appends each destination to (JSON lines, fsync'd). */
  egressLog: string;
  /** nsenter (absolute): calls enter the session's holder (contain-holder.ts); absent: own namespaces. */
  nsenter?: string;
  /** Where the runner leaves the call's final directory for the rewritten command's `cd` (host path). */
  cwdFile?: string;
}

const STRING_FIELDS = [
  "bwrap",
  "node",
  "init",
  "shell",
  "home",
  "workspace",
  "sessionTmp",
  "egressLog",
] as const;
const OPTIONAL_FIELDS = ["nsenter", "cwdFile"] as const;
const LIST_FIELDS = ["stateDirs", "credentials", "protectedPaths", "readOnly", "egress"] as const;

export function encodeSpec(spec: ContainSpec): string {
  return Buffer.from(JSON.stringify(spec), "utf8").toString("base64");
}

const absolute = (s: unknown): s is string =>
  typeof s === "string" && s.startsWith("/") && s.length < 4096 && !s.includes("\0");

/** The spec of a runner argument, or why it is not one (the runner then refuses to run). */
export function decodeSpec(b64: string): ContainSpec | string {
  let o: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(b64, "base64").toString("utf8"));
    if (typeof parsed !== "object" || parsed === null) return "the spec is not an object";
    o = parsed as Record<string, unknown>;
  } catch {
    return "the spec is not base64 JSON";
  }
  if (o.v !== 1) return "unknown spec version";
  for (const k of STRING_FIELDS) if (!absolute(o[k])) return `spec.${k} must be an absolute path`;
  for (const k of OPTIONAL_FIELDS)
    if (o[k] !== undefined && !absolute(o[k])) return `spec.${k} must be an absolute path`;
  for (const k of LIST_FIELDS) {
    const list = o[k];
    if (!Array.isArray(list) || list.length > 4096) return `spec.${k} must be a list`;
    const ok = k === "egress" ? (s: unknown) => typeof s === "string" && s.length <= 260 : absolute;
    if (!list.every(ok)) return `spec.${k} holds an invalid entry`;
  }
  return o as unknown as ContainSpec;
}
