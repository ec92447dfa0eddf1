// The runtime's ECT signing key (ES256, P-256), like the journal key: `apae.ect.key` when
// configured; otherwise `<journal>.ect-key.pem` beside the journal, generated on first start
// (mode 0600, refused when group- or world-accessible) and reused afterwards; an in-memory
// journal gets a key that lives as long as the process.
import { existsSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { TrustError } from "../contracts/index.js";
import { generateKeyPair, type KeyPair, loadPrivateKeyFile, saveKeyPair } from "../crypto/index.js";
import type { EctSigningKey } from "../trust/index.js";

export interface EctKey {
  key: EctSigningKey;
  /** Where the key was read from or written to (undefined: in memory). */
  file: string | undefined;
  generated: boolean;
}

function signingKey(pair: KeyPair, file: string): EctSigningKey {
  if (pair.type !== "p256")
    throw new TrustError("ERR_TRUST_CONFIG_INVALID", `${file} must be a P-256 (ES256) private key`);
  return { kid: pair.keyId, privateKey: pair.privateKey };
}

function load(file: string): KeyPair {
  try {
    return loadPrivateKeyFile(file);
  } catch (err) {
    throw new TrustError("ERR_TRUST_CONFIG_INVALID", `ECT key ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/** The configured key, or the one beside the journal (created when missing). */
export function ectKeyFor(configured: string | undefined, journalPath: string): EctKey {
  if (configured !== undefined)
    return { key: signingKey(load(configured), configured), file: configured, generated: false };
  if (journalPath === ":memory:") {
    const pair = generateKeyPair("p256");
    return { key: signingKey(pair, "(memory)"), file: undefined, generated: true };
  }
  const name = `${basename(journalPath)}.ect-key`;
  const file = join(dirname(journalPath), `${name}.pem`);
  if (existsSync(file)) return { key: signingKey(load(file), file), file, generated: false };
  const pair = generateKeyPair("p256");
  saveKeyPair(pair, dirname(journalPath), { name });
  return { key: signingKey(pair, file), file, generated: true };
}
