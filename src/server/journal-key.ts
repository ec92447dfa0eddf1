// The sidecar's journal signing key: loading it (Ed25519, private file mode enforced by
// the crypto layer), saying exactly how to create it when it does not exist yet, and
// creating it on request (`warden sidecar --init-keys`): a fresh pair written
// exclusively, private files 0600 in a 0700 directory, never over an existing file and
// never for a journal that already exists (a new key cannot continue another key's chain).
import { existsSync, mkdirSync } from "node:fs";
import { basename, dirname } from "node:path";
import { ServerError, WardenError } from "../contracts/index.js";
import {
  generateKeyPair,
  type KeyPair,
  keyTypeOf,
  loadPrivateKeyFile,
  publicKeyInfo,
  type SavedKeyFiles,
  saveKeyPair,
} from "../crypto/index.js";
import type { LoadedSidecarConfig } from "./config.js";

/** The base name `warden keys generate --name` takes to write `path`, if it can. */
function keyName(path: string): string | undefined {
  const file = basename(path);
  for (const ext of [".jwk.json", ".pem"]) {
    if (file.endsWith(ext) && file.length > ext.length) return file.slice(0, -ext.length);
  }
  return undefined;
}

function quote(arg: string): string {
  return /^[A-Za-z0-9_./:@%+=-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`;
}

/** The refusal for a configured key that does not exist, naming the commands that create it. */
export function missingKeyError(loaded: LoadedSidecarConfig): ServerError {
  const key = loaded.config.journal.key;
  const ways: string[] = [];
  if (loaded.source !== undefined) {
    ways.push(`warden sidecar --config ${quote(loaded.source)} --init-keys`);
  }
  const name = keyName(key);
  if (name !== undefined) {
    ways.push(`warden keys generate --type ed25519 --out ${quote(dirname(key))} --name ${quote(name)}`);
  }
  const how = ways.length > 0 ? `; create it with: ${ways.join("  or  ")}` : "";
  return new ServerError("ERR_SERVER_JOURNAL_KEY_MISSING", `journal key ${key} does not exist${how}`);
}

/** Loads the journal key; a missing file is ERR_SERVER_JOURNAL_KEY_MISSING with the fix. */
export function loadJournalKey(loaded: LoadedSidecarConfig): KeyPair {
  const path = loaded.config.journal.key;
  if (!existsSync(path)) throw missingKeyError(loaded);
  let pair: KeyPair;
  try {
    pair = loadPrivateKeyFile(path);
  } catch (err) {
    if (err instanceof WardenError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(`cannot read journal key ${path}: ${code ?? (err as Error).message}`);
  }
  if (keyTypeOf(pair.privateKey) !== "ed25519") {
    throw new Error(`journal key ${path} is not an Ed25519 key`);
  }
  return pair;
}

export interface CreatedJournalKey {
  keyId: string;
  files: SavedKeyFiles;
}

/**
 * Creates the configured journal key when it does not exist (`--init-keys`); returns
 * undefined when it already exists (it is then loaded and checked as usual). Refuses a
 * key path `warden keys generate` cannot produce and a journal that already exists.
 */
export function initJournalKey(loaded: LoadedSidecarConfig): CreatedJournalKey | undefined {
  const { key, path: journalPath } = loaded.config.journal;
  if (existsSync(key)) return undefined;
  const name = keyName(key);
  if (name === undefined) {
    throw new ServerError(
      "ERR_SERVER_CONFIG_INVALID",
      `--init-keys writes NAME.pem and NAME.jwk.json; journal.key ${key} ends in neither`,
    );
  }
  if (existsSync(journalPath)) {
    throw new ServerError(
      "ERR_SERVER_JOURNAL_KEY_MISSING",
      `journal key ${key} does not exist but the journal ${journalPath} does: a new key cannot continue its chain; restore the key that signed it`,
    );
  }
  mkdirSync(dirname(key), { recursive: true, mode: 0o700 });
  const pair = generateKeyPair("ed25519");
  // saveKeyPair writes exclusively (ERR_CRYPTO_KEY_FILE_EXISTS if a file appeared meanwhile).
  const files = saveKeyPair(pair, dirname(key), { name });
  return { keyId: publicKeyInfo(pair.publicKey).keyId, files };
}
