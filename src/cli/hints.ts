// One line of advice after a common error, so a person knows the next command to type: a
// port another process holds (→ --port), a key file that does not exist (→ the exact
// `warden keys generate` line that creates it). Errors it does not recognise get no hint.
import { basename, dirname } from "node:path";

/** Key file base names signed with P-256 (contracts, credentials, ECTs); the rest are Ed25519. */
const P256_NAMES = /^(publisher|contracts?|ect|identity|agentpin|credential|p256)/;

interface ErrnoLike {
  code?: unknown;
  syscall?: unknown;
  port?: unknown;
  path?: unknown;
  message?: unknown;
}

function portHint(e: ErrnoLike): string {
  const port = typeof e.port === "number" ? e.port : /:(\d+)\s*$/.exec(String(e.message))?.[1];
  const which = port === undefined ? "the port" : `port ${port}`;
  return `hint: ${which} is already in use (another sidecar or server?): pass --port with a free port (--port 0 picks one), or stop the process that holds it`;
}

/** The `warden keys generate` line that writes `path` (a private key file). */
export function keyCommand(path: string): string {
  const file = basename(path);
  const name = file.replace(/(\.jwk\.json|\.pem)$/, "");
  const type = P256_NAMES.test(name) ? "p256" : "ed25519";
  return `warden keys generate --type ${type} --out ${dirname(path)} --name ${name}`;
}

function missingKeyPath(e: ErrnoLike): string | undefined {
  if (e.code !== "ENOENT") return undefined;
  const path = typeof e.path === "string" ? e.path : /open '([^']+)'/.exec(String(e.message ?? ""))?.[1];
  if (path === undefined || !/\.(pem|jwk\.json)$/.test(path) || /\.pub\.(pem|jwk\.json)$/.test(path))
    return undefined;
  return path;
}

/** The hint line (with its newline) for `err`, or "" when there is none. */
export function hintFor(err: unknown): string {
  if (err === null || typeof err !== "object") return "";
  const e = err as ErrnoLike;
  if (e.code === "EADDRINUSE") return `${portHint(e)}\n`;
  const key = missingKeyPath(e);
  if (key !== undefined)
    return `hint: the key file ${key} does not exist; create it with: ${keyCommand(key)}\n`;
  return "";
}
