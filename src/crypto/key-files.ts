// Key files on disk. A key pair saved to DIR is four files named after the key type:
//   <name>.pem (PKCS#8, 0600), <name>.jwk.json (private JWK, 0600),
//   <name>.pub.pem (SPKI), <name>.pub.jwk.json (public JWK with kid and alg).
// Private files are created exclusively (never overwritten) with mode 0600 and are
// refused on load when the group or others can read them.
import type { KeyObject } from "node:crypto";
import { randomBytes } from "node:crypto";
import {
  closeSync,
  fstatSync,
  fsyncSync,
  linkSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { CryptoError } from "../contracts/index.js";
import { type KeyPair, keyPairFromPrivate, parsePrivateKey, parsePublicKey, publicKeyInfo } from "./keys.js";

export interface SavedKeyFiles {
  privatePem: string;
  privateJwk: string;
  publicPem: string;
  publicJwk: string;
}

export interface SaveOptions {
  /** Base file name (default: the key type, e.g. "ed25519"). */
  name?: string;
}

/**
 * Writes a key file whole under a private temporary name (fsync'd), then links it into
 * place: a concurrent reader (two first starts racing on a fresh directory) sees no file
 * or the whole key, never a partial one, and link() refuses a name that exists.
 */
function writeExclusive(path: string, data: string, mode: number): void {
  const tmp = `${path}.${process.pid}.${randomBytes(8).toString("hex")}.tmp`;
  const fd = openSync(tmp, "wx", mode);
  try {
    try {
      // The umask may have narrowed the mode; it can only have removed bits, but make sure.
      if ((fstatSync(fd).mode & 0o777) !== mode) {
        throw new CryptoError(
          "ERR_CRYPTO_KEY_FILE_PERMISSIONS",
          `could not create ${path} with mode ${mode.toString(8)}`,
        );
      }
      writeSync(fd, data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    linkSync(tmp, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") {
      throw new CryptoError("ERR_CRYPTO_KEY_FILE_EXISTS", `refusing to overwrite existing key file ${path}`);
    }
    throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
}

export function keyFilePaths(dir: string, name: string): SavedKeyFiles {
  return {
    privatePem: join(dir, `${name}.pem`),
    privateJwk: join(dir, `${name}.jwk.json`),
    publicPem: join(dir, `${name}.pub.pem`),
    publicJwk: join(dir, `${name}.pub.jwk.json`),
  };
}

export function saveKeyPair(pair: KeyPair, dir: string, options: SaveOptions = {}): SavedKeyFiles {
  const paths = keyFilePaths(dir, options.name ?? pair.type);
  const info = publicKeyInfo(pair.publicKey);
  const privateJwk = {
    ...pair.privateKey.export({ format: "jwk" }),
    kid: info.keyId,
    alg: info.publicJwk.alg,
  };
  writeExclusive(
    paths.privatePem,
    pair.privateKey.export({ format: "pem", type: "pkcs8" }).toString(),
    0o600,
  );
  writeExclusive(paths.privateJwk, `${JSON.stringify(privateJwk, null, 2)}\n`, 0o600);
  writeExclusive(paths.publicPem, info.publicKeyPem, 0o644);
  writeExclusive(paths.publicJwk, `${JSON.stringify(info.publicJwk, null, 2)}\n`, 0o644);
  return paths;
}

/** Throws ERR_CRYPTO_KEY_FILE_PERMISSIONS when `path` is readable or writable by group or others. */
export function assertPrivateFileMode(path: string): void {
  if (process.platform === "win32") return;
  const mode = statSync(path).mode & 0o777;
  if (mode & 0o077) {
    throw new CryptoError(
      "ERR_CRYPTO_KEY_FILE_PERMISSIONS",
      `private key file ${path} has mode ${mode.toString(8).padStart(4, "0")}; it must not be accessible to group or others (chmod 600)`,
    );
  }
}

export function loadPrivateKeyFile(path: string): KeyPair {
  const text = readFileSync(path, "utf8");
  if (/PUBLIC KEY/.test(text) || (text.trim().startsWith("{") && !/"d"\s*:/.test(text))) {
    throw new CryptoError("ERR_CRYPTO_KEY_NOT_PRIVATE", `${path} holds a public key, not a private key`);
  }
  assertPrivateFileMode(path);
  return keyPairFromPrivate(parsePrivateKey(text));
}

/** Load a public key from a PEM or JWK file; a private key file yields its public half. */
export function loadPublicKeyFile(path: string): KeyObject {
  return parsePublicKey(readFileSync(path, "utf8"));
}
