// The environment of a contained shell call (docs/hooks-containment.md "Environment"): an
// allowlist of the host shell's variables — never a hook credential, a token or an agent
// socket — plus the proxy variables that send every HTTP client to the in-sandbox egress
// proxy, and caches redirected to the sandbox's private /tmp (HOME is read-only there).
// No dependency: the runner and the in-sandbox init load this for every call.

/** Variables passed through as they are (exact names); `LC_*` too. */
const PASS: ReadonlySet<string> = new Set([
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LANGUAGE",
  "TERM",
  "COLORTERM",
  "TZ",
  "CI",
  "NO_COLOR",
  "FORCE_COLOR",
  "EDITOR",
  "VISUAL",
  "NODE_ENV",
  "GIT_AUTHOR_NAME",
  "GIT_AUTHOR_EMAIL",
  "GIT_COMMITTER_NAME",
  "GIT_COMMITTER_EMAIL",
  "JAVA_HOME",
  "GOPATH",
  "GOROOT",
  "CARGO_HOME",
  "RUSTUP_HOME",
  "VIRTUAL_ENV",
  "CONDA_PREFIX",
  "PYENV_ROOT",
  "NVM_DIR",
  "NVM_BIN",
  "VOLTA_HOME",
  "BUN_INSTALL",
  "DENO_DIR",
  "PNPM_HOME",
  "CLAUDECODE",
  "CLAUDE_PROJECT_DIR",
]);

/** Names never passed whatever the allowlist says (defence in depth). */
const NEVER = /^WARDEN_|TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|CREDENTIAL|(^|_)AUTH(_|$)|SSH_AUTH_SOCK|^AWS_/i;

/** Where the sandbox's own caches go: its private /tmp (HOME is read-only). */
const CACHES: Readonly<Record<string, string>> = {
  TMPDIR: "/tmp",
  XDG_CACHE_HOME: "/tmp/.cache",
  npm_config_cache: "/tmp/.npm",
  npm_config_update_notifier: "false",
};

/** The host environment reduced to the allowlist, with the sandbox's cache locations. */
export function scrubEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined || NEVER.test(k)) continue;
    if (PASS.has(k) || k.startsWith("LC_")) out[k] = v;
  }
  return { ...out, ...CACHES };
}

/** The proxy variables for the in-sandbox listener on 127.0.0.1:`port`. */
export function proxyEnv(port: number): Record<string, string> {
  const url = `http://127.0.0.1:${port}`;
  const local = "localhost,127.0.0.1,::1";
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    ALL_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    all_proxy: url,
    NO_PROXY: local,
    no_proxy: local,
    NODE_USE_ENV_PROXY: "1",
    npm_config_proxy: url,
    npm_config_https_proxy: url,
  };
}

/** Where the egress proxy's Unix socket is bound inside the sandbox. */
export const SANDBOX_PROXY_SOCKET = "/run/warden/egress.sock";
/** Where the command to run is bound inside the sandbox (read-only; any size). */
export const SANDBOX_COMMAND = "/run/warden/command";
/** Where the init writes the command's final directory (a `cd` carries over to the next call). */
export const SANDBOX_CWD = "/run/warden/cwd";
/** The session's gate (read-only): while `frozen` exists there, a call waits before its command starts. */
export const SANDBOX_GATE = "/run/warden/gate";
