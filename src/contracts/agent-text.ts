// What the agent may read of an error. Error messages from executors and from Warden's own
// layers can quote internal paths, stack frames and the names of secret variables; the
// agent gets the first line with those replaced, at most 300 characters. The full message
// goes to the journal (RecoveryTriggered), where credentials are masked on append.

const MAX_CHARS = 300;

/** `file:` URLs and absolute paths (POSIX, home-relative, Windows drive and UNC), not URL paths. */
const PATH = /file:\S+|(?<![\w:/.\\-])(?:~?\/|[A-Za-z]:\\|\\\\)[^\s'"`,;)]*/g;
/** `node:internal/...` and similar module specifiers from stack traces. */
const MODULE = /\bnode:[\w/.-]+(?::\d+)*/g;
/** `$VAR`, `${VAR}`, `process.env.VAR`, and upper-case names that look like credentials. */
const SECRET_NAME =
  /\$\{?[A-Za-z_]\w*\}?|\bprocess\.env\.\w+|\b[A-Z][A-Z0-9]*_?[A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL|PRIVATE|API_?KEY|ACCESS_?KEY)[A-Z0-9_]*\b/g;

export function agentErrorText(message: string): string {
  const first = message.split(/\r?\n/, 1)[0] ?? "";
  const text = first
    .replace(MODULE, "[path]")
    .replace(PATH, "[path]")
    .replace(SECRET_NAME, "[name]")
    .replace(/\s+at\s+\S+\s+\(\[path\]\)/g, "")
    .trim();
  return text.length > MAX_CHARS ? `${text.slice(0, MAX_CHARS)}…` : text;
}
