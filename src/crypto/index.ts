// Public face of the crypto layer: key pairs, key files, key ids, signatures.
export {
  assertPrivateFileMode,
  keyFilePaths,
  loadPrivateKeyFile,
  loadPublicKeyFile,
  type SavedKeyFiles,
  type SaveOptions,
  saveKeyPair,
} from "./key-files.js";
export { Keyring } from "./keyring.js";
export {
  fingerprintOf,
  generateKeyPair,
  type JsonWebKey,
  KEY_TYPES,
  type KeyPair,
  type KeyType,
  keyIdOf,
  keyPairFromPrivate,
  keyTypeOf,
  type PublicKeyInfo,
  parsePrivateKey,
  parsePublicKey,
  publicKeyInfo,
  toPublicKey,
} from "./keys.js";
export {
  type EcdsaEncoding,
  ecdsaDerToRaw,
  ecdsaRawToDer,
  type SignOptions,
  sign,
  signCanonical,
  verify,
  verifyCanonical,
} from "./signing.js";
