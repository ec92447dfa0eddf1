// Containment of the host's shell tool (docs/hooks-containment.md): a shell call the Gate
// allows is answered allow WITH the directive `updated_input` — the same tool input whose
// `command` is the contained command: absolute Node + the runner (contain-run.js) + the
// placed profile + the ORIGINAL command, each one single-quoted word (the command is
// base64, never spliced into shell syntax). Where containment is unavailable (no
// bubblewrap, namespaces refused, no workspace) the call is asked (`containment: "auto"`,
// the default) or denied (`"required"`) — never a silent allow. Read-only commands proven
// harmless are not exempted yet: every shell call is contained or asked.
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { sha256Hex } from "../contracts/index.js";
import { bwrapPath, bwrapUnavailable } from "../executors/index.js";
import {
  type CodingProfile,
  type CodingProfileConfig,
  codingProfile,
  egressAllowed,
  isWithin,
} from "./coding-profile.js";
import { holderDir } from "./contain-holder.js";
import { specProblem } from "./contain-profile.js";
import { ScanTruncated, type WorkspaceScan, workspaceScan } from "./contain-scan.js";

export { ScanTruncated, type WorkspaceScan, workspaceCredentials, workspaceScan } from "./contain-scan.js";

import { gitHooksPath, gitInnerControl, gitRemoteHosts } from "./contain-remotes.js";
import { type ContainSpec, encodeSpec } from "./contain-spec.js";
import type { Verdict } from "./schema-base.js";

/** Operator settings (EngineConfig); nothing the agent can reach switches containment off. */
export interface ContainmentConfig {
  /** `auto` (default): ask where containment is unavailable; `required`: deny there. */
  mode?: "auto" | "required";
  profile?: Partial<CodingProfileConfig>;
  /** Warden's hooks state directory: egress journals go under it; invisible in the sandbox. */
  hooksDir: string;
  /** More of Warden's state (journal, keys): invisible in the sandbox. */
  stateDirs: readonly string[];
  /** bwrap binary (default: /usr/bin/bwrap or /bin/bwrap). */
  bwrap?: string;
  home?: string;
  /** Calls of a session share one network and PID namespace (default true where nsenter exists). */
  shareSession?: boolean;
}

/** The compiled runner and init beside this file (from src/, the built copy in dist/). */
export function runnerFiles(): { run: string; init: string; dir: string } {
  const here = fileURLToPath(import.meta.url);
  const dir = here.endsWith(".ts") ? join(dirname(here), "..", "..", "dist", "src", "hooks") : dirname(here);
  return { run: join(dir, "contain-run.js"), init: join(dir, "contain-init.js"), dir };
}

/**
 * Warden's own files the sandbox must not change: the whole package when it is installed
 * inside the workspace (`node_modules/warden-runtime`: the hook command and engine run from it on
 * the host); else the runner's directory (Warden's own checkout as the workspace keeps its
 * build writable — install Warden outside the workspace it guards).
 */
function wardenFiles(runnerDir: string, workspace: string): string[] {
  const root = resolve(runnerDir, "..", "..", "..");
  return root !== resolve(workspace) && isWithin(root, resolve(workspace)) ? [root] : [runnerDir];
}

/** Why contained calls cannot run on this machine (undefined: they can). */
export function containmentUnavailable(bwrap?: string): string | undefined {
  const why = bwrapUnavailable(bwrap);
  if (why === undefined) return undefined;
  if (/not installed/.test(why))
    return "bubblewrap is not installed: apt-get install bubblewrap (dnf install bubblewrap)";
  return `bubblewrap cannot create namespaces here (${why}); allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or an AppArmor profile for bwrap where kernel.apparmor_restrict_unprivileged_userns=1)`;
}

const PROBE_TTL_MS = 60 * 60 * 1000;

/**
 * `containmentUnavailable` with a successful probe remembered for an hour in the hooks
 * directory (keyed by the bwrap binary's path and mtime): a hook process per event then
 * does not start bwrap to probe before every shell call. A failure is never remembered.
 */
export function containmentUnavailableCached(hooksDir: string, bwrap?: string): string | undefined {
  const file = join(hooksDir, "contain-probe.json");
  const path = bwrapPath(bwrap);
  let key: string;
  try {
    key = `${path}:${statSync(path).mtimeMs}`;
  } catch {
    return containmentUnavailable(bwrap);
  }
  try {
    const seen = JSON.parse(readFileSync(file, "utf8")) as { key?: string; at?: number };
    if (seen.key === key && typeof seen.at === "number" && Date.now() - seen.at < PROBE_TTL_MS)
      return undefined;
  } catch {
    // No (valid) record: probe.
  }
  const why = containmentUnavailable(bwrap);
  if (why === undefined) {
    try {
      writeFileSync(file, JSON.stringify({ key, at: Date.now() }), { mode: 0o600 });
    } catch {
      // An unwritable hooks directory: probe again next time.
    }
  }
  return why;
}

/** One call's names: the session's key (a hash of host and session) and the call's id. */
export interface CallNames {
  sessionKey: string;
  callId: string;
}

/** The file-name key of a host session (a hash: any session id fits). */
export function sessionKeyOf(hostId: string, sessionId: string): string {
  return sha256Hex(`${hostId}\u0000${sessionId}`).slice(7, 39);
}

export function safeCallId(id: string): string {
  return id.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64) || "call";
}

/** A session's private /tmp on the host (`$TMPDIR/warden-contain-<uid>/<session key>`). */
export function sessionTmpOf(sessionKey: string): string {
  return join(tmpdir(), `warden-contain-${process.getuid?.() ?? "user"}`, sessionKey);
}

/** The runner's spec for one call in `workspace`. */
export function containSpec(
  c: ContainmentConfig,
  workspace: string,
  names: CallNames,
  scan: WorkspaceScan = workspaceScan(workspace),
): ContainSpec {
  const home = c.home ?? homedir();
  const profile: CodingProfile = codingProfile(
    { home, workspace, stateDirs: [c.hooksDir, ...c.stateDirs] },
    c.profile ?? {},
  );
  const files = runnerFiles();
  const shell = basename(process.env.SHELL ?? "");
  const hooksPath = gitHooksPath(workspace);
  const sessionTmp = sessionTmpOf(names.sessionKey);
  const nsenter = c.shareSession === false ? undefined : nsenterPath();
  return {
    v: 1,
    bwrap: bwrapPath(c.bwrap),
    node: process.execPath,
    init: files.init,
    shell: ["bash", "zsh", "sh", "dash"].includes(shell) ? (process.env.SHELL as string) : "/bin/bash",
    home,
    workspace,
    stateDirs: profile.stateDirs,
    credentials: [...profile.credentials, ...scan.credentials],
    protectedPaths: [
      ...profile.protectedPaths,
      ...scan.nestedGit,
      ...(hooksPath !== undefined ? [hooksPath] : []),
      ...gitInnerControl(workspace),
    ],
    readOnly: [...wardenFiles(files.dir, workspace), process.execPath],
    egress: [...profile.egress, ...gitRemoteHosts(workspace)],
    sessionTmp,
    egressLog: join(c.hooksDir, "egress", `${names.sessionKey}-${safeCallId(names.callId)}`),
    ...(nsenter !== undefined
      ? { nsenter, cwdFile: join(holderDir(sessionTmp), `cwd-${safeCallId(names.callId)}-${randomUUID()}`) }
      : {}),
  };
}

/** nsenter (util-linux), which lets a call enter its session's namespaces; undefined: calls use their own. */
export function nsenterPath(): string | undefined {
  return ["/usr/bin/nsenter", "/bin/nsenter"].find((p) => existsSync(p));
}

const quote = (v: string) => `'${v.replace(/'/g, `'\\''`)}'`;

/** Above this, the command goes through a file: one argv word is at most 128 KiB on Linux. */
const MAX_INLINE_BASE64 = 64 * 1024;

/** A long command stashed for the runner in Warden's hooks directory (invisible in the sandbox). */
function stash(command: string, spec: ContainSpec): string {
  const dir = join(dirname(dirname(spec.egressLog)), "commands");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `${basename(spec.egressLog)}-${randomUUID()}.cmd`);
  writeFileSync(file, command, { mode: 0o600 });
  return `@${file}`;
}

/** The rewritten shell command: node + runner + spec + the original command (base64, or `@file` when long). */
export function containCommand(o: { command: string; spec: ContainSpec; runner?: string }): string {
  const b64 = Buffer.from(o.command, "utf8").toString("base64");
  const word = b64.length > MAX_INLINE_BASE64 ? stash(o.command, o.spec) : b64;
  const run = [o.spec.node, o.runner ?? runnerFiles().run, encodeSpec(o.spec), word].map(quote).join(" ");
  if (o.spec.cwdFile === undefined) return run;
  // The host shell follows a `cd` of the call (the runner leaves the directory, checked to
  // lie in the workspace, in cwdFile); the status stays the command's.
  const f = quote(o.spec.cwdFile);
  return `${run}; set -- "$?"; if [ -s ${f} ]; then cd -- "$(cat -- ${f})" 2>/dev/null; fi; rm -f -- ${f}; (exit "$1")`;
}

const SHELL_TOOLS = new Set(["shell", "package_install"]);
/** Where a host's shell tool carries its command line (taxonomy's shellShape reads the same). */
const COMMAND_KEYS = ["command", "cmd", "code", "script"];

export interface ShellCall {
  tool: string;
  input: Record<string, unknown>;
  workspace: string | undefined;
  names: CallNames;
  /** The host (only Claude Code renders an ask WITH the rewritten input). */
  hostId?: string;
}

/** Hosts a command line names in URLs (`https://h/…`, `git://h`, `ssh://git@h:22`): what the proxy will be asked for. */
export function commandHosts(command: string): string[] {
  const out = new Set<string>();
  for (const m of command.matchAll(
    /\b(?:https?|wss?|git|ssh|ftp):\/\/(?:[^/\s'"@]*@)?(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+)/g,
  ))
    if (m[1] !== undefined) out.add(m[1].toLowerCase());
  // The sandbox's own loopback is reached directly (NO_PROXY), never through the proxy.
  const local = (h: string) =>
    h === "localhost" || h.endsWith(".localhost") || /^127\./.test(h) || h === "[::1]";
  return [...out].filter((h) => !local(h)).slice(0, 16);
}

/**
 * `unknownEgress: "ask"`: a contained call whose command names hosts off the allowlist is
 * put to the user — Claude Code's ask WITH the rewritten input, whose spec lets exactly
 * those hosts through for this call. A host that cannot show the rewritten input with its
 * ask would run the original command uncontained on approval: denied there instead.
 */
function askEgress(
  c: ContainmentConfig,
  call: ShellCall,
  spec: ContainSpec,
  verdict: Verdict,
): Verdict | undefined {
  if (c.profile?.unknownEgress !== "ask") return undefined;
  const unknown = commandHosts(call.input.command as string).filter((h) => !egressAllowed(spec, h));
  if (unknown.length === 0) return undefined;
  const why = `egress to ${unknown.join(", ")} is not on the allowlist`;
  if (call.hostId !== "claude-code")
    return {
      ...verdict,
      decision: "deny",
      severity: "warning",
      matched_rule_id: "warden-egress-ask",
      reasons: [why],
    };
  const asked = { ...spec, egress: [...spec.egress, ...unknown] };
  const command = containCommand({ command: call.input.command as string, spec: asked });
  return {
    ...verdict,
    decision: "ask",
    severity: "warning",
    matched_rule_id: "warden-egress-ask",
    reasons: [`${why}: allow it for this contained call?`],
    suggested_resolutions: ["approved", "denied"],
    directives: { ...(verdict.directives ?? {}), updated_input: { ...call.input, command } },
  };
}

/** Why this call cannot be contained (undefined: it can). */
function callProblem(c: ContainmentConfig, call: ShellCall): string | undefined {
  if (typeof call.input.command !== "string") return "the shell call has no command";
  const why = containmentUnavailableCached(c.hooksDir, c.bwrap);
  if (why !== undefined) return why;
  if (call.workspace === undefined) return "no workspace is known for this session";
  return undefined;
}

/**
 * An allowed shell call → allow with the contained command; unavailable → ask (or deny).
 * Only a host's shell command line is rewritten: a shell-class call whose input carries no
 * command line at all (`command`, `cmd`, `code`, `script` — Warden's own agent loop, whose
 * tools run through Warden's process executor and its sandbox tiers) keeps the policy's
 * verdict; one that is not a string `command` cannot be contained and is asked.
 */
export function containVerdict(c: ContainmentConfig, call: ShellCall, verdict: Verdict): Verdict {
  if (verdict.decision !== "allow" || !SHELL_TOOLS.has(call.tool)) return verdict;
  if (!COMMAND_KEYS.some((k) => k in call.input)) return verdict;
  let problem = callProblem(c, call);
  let spec: ContainSpec | undefined;
  if (problem === undefined && call.workspace !== undefined) {
    const scan = workspaceScan(call.workspace);
    if (scan.truncated) problem = new ScanTruncated(call.workspace).message;
    else {
      spec = containSpec(c, call.workspace, call.names, scan);
      problem = specProblem(spec, false);
    }
  }
  if (problem !== undefined || spec === undefined) {
    const decision = c.mode === "required" ? "deny" : "ask";
    const reason = `the shell call cannot be contained: ${problem ?? "unavailable"}`;
    return {
      ...verdict,
      decision,
      severity: "warning",
      matched_rule_id: "warden-containment-unavailable",
      reasons: [reason],
      ...(decision === "ask" ? { suggested_resolutions: ["approved", "denied"] } : {}),
    };
  }
  const asked = askEgress(c, call, spec, verdict);
  if (asked !== undefined) return asked;
  const command = containCommand({ command: call.input.command as string, spec });
  const reasons = [...(verdict.reasons ?? []), "contained"];
  return {
    ...verdict,
    reasons,
    directives: { ...(verdict.directives ?? {}), updated_input: { ...call.input, command } },
  };
}
