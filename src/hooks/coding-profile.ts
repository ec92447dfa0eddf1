// The coding-agent profile: the one list of what an agent on a developer's machine may never
// read (credential locations), never write (the hosts' hook settings, Warden's own state,
// VCS hooks and config, shell start-up files, persistence locations) and where it may send
// data (the egress allowlist). The file-tool checks (taxonomy/evaluate-tool) and the
// sandbox profile (bubblewrap masks and read-only binds) both read it, so a path that is
// masked in the sandbox is also refused to the host's own file tools. docs/hooks.md
// "Coding-agent profile".
import { lstatSync } from "node:fs";
import { basename, dirname, isAbsolute, join, normalize, sep } from "node:path";
import { z } from "zod";
import { egressAllowed, isWithin } from "./coding-profile-match.js";

export { egressAllowed, isWithin };

/** Credential locations under $HOME: masked in the sandbox, never readable by file tools. */
export const HOME_CREDENTIALS: readonly string[] = [
  ".ssh",
  ".aws",
  ".azure",
  ".config/gcloud",
  ".config/gh",
  ".config/hub",
  ".config/op",
  ".config/doctl",
  ".kube",
  ".docker/config.json",
  ".gnupg",
  ".password-store",
  ".local/share/keyrings",
  ".npmrc",
  ".yarnrc.yml",
  ".netrc",
  ".git-credentials",
  ".config/git/credentials",
  ".pypirc",
  ".cargo/credentials",
  ".cargo/credentials.toml",
  ".gem/credentials",
  ".terraform.d/credentials.tfrc.json",
  ".vault-token",
  ".bash_history",
  ".zsh_history",
  ".python_history",
  ".node_repl_history",
  ".psql_history",
  ".mysql_history",
  // Warden's own state and keys (journal keys, the hook state, the ask key, the host secret).
  ".warden",
];

/**
 * Never writable under $HOME (in the sandbox $HOME is read-only anyway; these are the ones
 * the host's own file tools must refuse too): shell start-up files, git's global config,
 * autostart and persistence locations, every host's settings and hooks, Warden's state.
 */
export const HOME_PROTECTED: readonly string[] = [
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".bash_logout",
  ".profile",
  ".zshrc",
  ".zshenv",
  ".zprofile",
  ".zlogin",
  ".config/fish",
  ".inputrc",
  ".gitconfig",
  ".config/git",
  ".config/autostart",
  ".config/systemd",
  ".config/environment.d",
  ".local/share/systemd",
  ".local/bin",
  ".ssh",
  ".claude",
  ".claude.json",
  ".cursor",
  ".codex",
  ".gemini",
  ".copilot",
  ".config/github-copilot",
  ".warden",
];

/**
 * Never writable inside the workspace (relative to its root): every host's hook and settings
 * files, project MCP server lists (a server there runs at the next session), git's hooks and
 * config (core.hooksPath, core.sshCommand and core.fsmonitor run code; `.git/commondir`
 * names the directory git then reads config and hooks from).
 */
export const WORKSPACE_PROTECTED: readonly string[] = [
  ".claude/settings.json",
  ".claude/settings.local.json",
  ".claude/hooks",
  ".claude/commands",
  ".claude/skills",
  ".claude/agents",
  ".mcp.json",
  ".cursor/hooks.json",
  ".cursor/mcp.json",
  ".cursor/rules",
  ".codex",
  ".gemini/settings.json",
  ".gemini/extensions",
  ".gemini/policies",
  ".github/hooks",
  ".github/copilot",
  ".vscode/settings.json",
  ".vscode/tasks.json",
  // A launch configuration runs its program (and preLaunchTask) when the user starts debugging.
  ".vscode/launch.json",
  // direnv runs .envrc in the user's shell on entering the directory.
  ".envrc",
  ".git/hooks",
  ".git/config",
  ".git/commondir",
  ".warden",
];

/** Suffixes of `.env.<x>` that are templates, not secrets (`.env.example` is readable). */
const ENV_TEMPLATES = new Set(["example", "sample", "template", "dist", "defaults", "schema"]);

/** Whether a file name (its last segment) is a credential file wherever it lies. */
export function isCredentialName(name: string): boolean {
  if (name === ".env") return true;
  if (name.startsWith(".env.")) return !ENV_TEMPLATES.has(name.slice(5).toLowerCase());
  if (/^id_(rsa|dsa|ecdsa|ed25519)(_sk)?$/.test(name)) return true;
  return false;
}

/** Default egress allowlist of the sandbox's proxy: package registries (the project's git remotes are added). */
export const DEFAULT_EGRESS_HOSTS: readonly string[] = [
  "registry.npmjs.org",
  "registry.yarnpkg.com",
  "pypi.org",
  "files.pythonhosted.org",
  "crates.io",
  "index.crates.io",
  "static.crates.io",
  "proxy.golang.org",
  "sum.golang.org",
  "rubygems.org",
  "repo.maven.apache.org",
  "deb.debian.org",
];

/** The operator's additions and overrides (hook config `profile`; CLI `--profile FILE`). */
export const CodingProfileConfigSchema = z.strictObject({
  /** Extra credential locations: `~/…`, absolute, or workspace-relative paths. */
  credentials: z.array(z.string().min(1).max(4096)).max(256).default([]),
  /** Extra never-writable locations, same forms. */
  protect: z.array(z.string().min(1).max(4096)).max(256).default([]),
  /** Hosts the egress proxy lets through (exact names or `*.suffix`); replaces the default list when `replaceEgress`. */
  egress: z.array(z.string().min(1).max(253)).max(1024).default([]),
  replaceEgress: z.boolean().default(false),
  /** A destination not on the list: `deny` (default: the proxy refuses) or `ask` (a Bash call naming one is asked, contained, that host let through for the call). */
  unknownEgress: z.enum(["deny", "ask"]).default("deny"),
});
export type CodingProfileConfig = z.infer<typeof CodingProfileConfigSchema>;

/** The profile placed on one machine: every location absolute and normalised. */
export interface CodingProfile {
  home: string;
  workspace: string | undefined;
  /** Warden's own state directories (the hooks dir, keys): invisible in the sandbox. */
  stateDirs: string[];
  credentials: string[];
  protectedPaths: string[];
  egress: string[];
  unknownEgress: "deny" | "ask";
}

function place(p: string, home: string, workspace: string | undefined): string | undefined {
  if (p === "~" || p.startsWith("~/")) return normalize(join(home, p.slice(1)));
  if (isAbsolute(p)) return normalize(p);
  return workspace === undefined ? undefined : normalize(join(workspace, p));
}

export function codingProfile(
  where: { home: string; workspace: string | undefined; stateDirs: readonly string[] },
  config: Partial<CodingProfileConfig> = {},
): CodingProfile {
  const c = CodingProfileConfigSchema.parse(config);
  const { home, workspace } = where;
  const placeAll = (list: readonly string[]) =>
    list.map((p) => place(p, home, workspace)).filter((p): p is string => p !== undefined);
  return {
    home: normalize(home),
    workspace: workspace === undefined ? undefined : normalize(workspace),
    stateDirs: where.stateDirs.map((d) => normalize(d)),
    credentials: [...HOME_CREDENTIALS.map((p) => join(home, p)), ...placeAll(c.credentials)],
    protectedPaths: [
      ...HOME_PROTECTED.map((p) => join(home, p)),
      ...(workspace === undefined ? [] : WORKSPACE_PROTECTED.map((p) => join(workspace, p))),
      ...where.stateDirs.map((d) => normalize(d)),
      ...placeAll(c.protect),
    ],
    egress: c.replaceEgress ? [...c.egress] : [...DEFAULT_EGRESS_HOSTS, ...c.egress],
    unknownEgress: c.unknownEgress,
  };
}

/** A resolved absolute path the agent may never read. */
export function isCredentialPath(profile: CodingProfile, path: string): boolean {
  if (profile.credentials.some((c) => isWithin(path, c))) return true;
  if (profile.stateDirs.some((d) => isWithin(path, d))) return true;
  return path.split(sep).some((seg) => isCredentialName(seg));
}

/**
 * What in ANY repository's `.git` runs code or redirects git (`config`: core.fsmonitor,
 * core.hooksPath; `hooks`; `commondir`; submodules' and worktrees' own): protected at every
 * depth of the workspace — a nested repository (`vendor/lib/.git/config`) is run by the
 * user's editor and git as much as the workspace's own.
 */
const GIT_CONTROL = new Set(["config", "hooks", "commondir", "config.worktree", "modules", "worktrees"]);

function inGitControl(profile: CodingProfile, path: string): boolean {
  const ws = profile.workspace;
  if (ws === undefined || !isWithin(path, ws)) return false;
  const segs = path
    .slice(ws.length)
    .split(sep)
    .filter((x) => x !== "");
  return segs.some((seg, i) => seg === ".git" && GIT_CONTROL.has(segs[i + 1] ?? ""));
}

/** A resolved absolute path the agent may never write (credential locations included). */
export function isProtectedPath(profile: CodingProfile, path: string): boolean {
  return (
    profile.protectedPaths.some((p) => isWithin(path, p)) ||
    isCredentialPath(profile, path) ||
    inGitControl(profile, path)
  );
}

/**
 * A workspace secrets file the agent may CREATE: a credential file name (`.env`,
 * `.env.local`) in the workspace, in no credential or protected location, that does not
 * exist yet (`cp .env.example .env`). Reading it stays refused, and an existing one stays
 * never writable (the user's secrets are not overwritten; the sandbox masks it).
 */
export function isCreatableSecret(profile: CodingProfile, path: string): boolean {
  const ws = profile.workspace;
  if (ws === undefined || !isWithin(path, ws) || !isCredentialName(basename(path))) return false;
  const parent = dirname(path);
  if (isProtectedPath(profile, parent) || profile.protectedPaths.some((p) => isWithin(path, p))) return false;
  if (profile.credentials.some((c) => isWithin(path, c))) return false;
  try {
    return lstatSync(path, { throwIfNoEntry: false }) === undefined;
  } catch {
    return false;
  }
}
