// A secret kept in a file of Warden's hooks state directory (0600, created on first use):
// the key of the engine's ask records (ask-record.ts) and the host secret of the stdio
// engine (stdio.ts). The directory is masked in the sandbox and a credential location for
// the file tools, so the agent can read neither; the secret is never put in the workspace
// or in an environment variable. Two processes creating it at once share the winner's
// (the file appears whole, by link(2)); a file others may read, or a link, is refused.
import { randomBytes } from "node:crypto";
import { linkSync, lstatSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { HookError } from "../contracts/index.js";
import { isWithin } from "./coding-profile.js";

const HEX = /^[0-9a-f]{64}$/;

function readSecret(path: string): Buffer {
  const st = lstatSync(path);
  if (!st.isFile()) throw new HookError("ERR_HOOK_CONFIG_INVALID", `${path} is not a regular file`);
  const uid = typeof process.getuid === "function" ? process.getuid() : st.uid;
  if ((st.mode & 0o077) !== 0 || st.uid !== uid) {
    throw new HookError("ERR_HOOK_CONFIG_INVALID", `${path} must be the user's own and mode 0600`);
  }
  const text = readFileSync(path, "utf8").trim();
  if (!HEX.test(text)) throw new HookError("ERR_HOOK_CONFIG_INVALID", `${path} does not hold a secret`);
  return Buffer.from(text, "hex");
}

/** The secret in `path`, created (32 random bytes, hex, 0600) when the file does not exist. */
export function secretFile(path: string): Buffer {
  try {
    return readSecret(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  writeFileSync(tmp, `${randomBytes(32).toString("hex")}\n`, { mode: 0o600, flag: "wx" });
  try {
    linkSync(tmp, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  } finally {
    unlinkSync(tmp);
  }
  return readSecret(path);
}

/**
 * The ask records' key: `ask.key` in the hooks state directory, or one in memory for an
 * engine without one. A state directory inside the workspace (where the agent writes) holds
 * no key: its asks are answered once but never remembered.
 */
export function askKeyFor(stateDir: string | undefined, workspace?: string): () => Buffer {
  let key: Buffer | undefined = stateDir === undefined ? randomBytes(32) : undefined;
  return () => {
    if (key !== undefined) return key;
    const dir = resolve(stateDir as string);
    if (workspace !== undefined && isWithin(dir, resolve(workspace))) {
      throw new HookError("ERR_HOOK_CONFIG_INVALID", "the hooks state directory lies in the workspace");
    }
    key = secretFile(join(dir, "ask.key"));
    return key;
  };
}

/** The stdio engine's host secret: `host.secret` in the hooks state directory. */
export function hostSecretPath(hooksDir: string): string {
  return join(hooksDir, "host.secret");
}
