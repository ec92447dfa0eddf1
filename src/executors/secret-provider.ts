// Just-in-time secrets (OATS E8): a contract declares a secret as `jit` with a provider
// and a reference; the executor asks the provider for it once per call, while building
// that call's request, and keeps the value only in that call's closure: it is substituted
// into the request, handed to the masker (so no spelling of it reaches the output, the
// evidence or an error), and never stored in the session context or the journal. The
// request names the call (tool, run, decision), so a vault provider can mint a credential
// scoped to it and revoke it afterwards.
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

export interface SecretRequest {
  /** The secret's name in the contract (`{_secret:name}`). */
  name: string;
  /** The contract's `ref` for it: a variable name, a file path, a vault path. */
  ref: string;
  tool: string;
  runId: string;
  decisionId: string;
  signal: AbortSignal;
}

/** Where JIT secrets come from. Undefined (or empty) means the secret is missing: the call fails closed. */
export interface SecretProvider {
  get(request: SecretRequest): Promise<string | undefined>;
}

/** `provider = "env"`: the environment variable named by `ref`, read at call time. */
export class EnvSecretProvider implements SecretProvider {
  readonly #env: Readonly<Record<string, string | undefined>>;

  constructor(env: Readonly<Record<string, string | undefined>> = process.env) {
    this.#env = env;
  }

  async get(r: SecretRequest): Promise<string | undefined> {
    const v = Object.hasOwn(this.#env, r.ref) ? this.#env[r.ref] : undefined;
    return v === undefined || v === "" ? undefined : v;
  }
}

const MAX_SECRET_FILE_BYTES = 65_536;

/**
 * `provider = "file"`: the file at `ref` (absolute; a mounted secret, e.g. Kubernetes
 * `/var/run/secrets/...`), read at call time, one trailing newline dropped. Refused (as
 * missing): a relative path, a symlink, anything but a regular file, over 64 KiB.
 */
export class FileSecretProvider implements SecretProvider {
  async get(r: SecretRequest): Promise<string | undefined> {
    if (!r.ref.startsWith("/")) return undefined;
    let fd: number | undefined;
    try {
      fd = openSync(r.ref, constants.O_RDONLY | constants.O_NOFOLLOW);
      const st = fstatSync(fd);
      if (!st.isFile() || st.size > MAX_SECRET_FILE_BYTES) return undefined;
      const buf = Buffer.alloc(st.size);
      const n = readSync(fd, buf, 0, st.size, 0);
      const text = buf
        .subarray(0, n)
        .toString("utf8")
        .replace(/\r?\n$/, "");
      return text === "" ? undefined : text;
    } catch {
      return undefined;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }
}

/** The built-in providers; a deployment adds its own (e.g. `vault`) beside them. */
export function defaultSecretProviders(
  env: Readonly<Record<string, string | undefined>> = process.env,
): Record<string, SecretProvider> {
  return { env: new EnvSecretProvider(env), file: new FileSecretProvider() };
}
