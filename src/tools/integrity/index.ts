// Public face of tool contract integrity: SchemaPin-compatible signatures over tool
// contracts and schemas, discovery and revocation documents, TOFU pins, trust bundles.

export { writeFileAtomic } from "./atomic-write.js";
export {
  BUNDLE_AUTHORITY_PIN_DOMAIN,
  parseTrustBundle,
  type SignBundleOptions,
  signTrustBundle,
  type TrustBundle,
  type VerifyBundleOptions,
  verifyTrustBundle,
} from "./bundle.js";
export {
  compareCodePoints,
  SCHEMAPIN_CANONICALIZATION,
  schemapinCanonical,
  schemapinCanonicalBytes,
} from "./canonical.js";
export {
  type ContractIntegrityOptions,
  contractAsSignedSchema,
  signContract,
  signContractFile,
  verifyContractIntegrity,
} from "./contract.js";
export {
  buildDiscoveryDocument,
  buildRevocationDocument,
  type DiscoveryDocument,
  type DiscoveryInput,
  discoveryFromData,
  parseDiscoveryDocument,
  parseRevocationDocument,
  type RevocationDocument,
  type RevocationReason,
  type RevokedKey,
  revocationFromData,
} from "./documents.js";
export {
  checkDocumentUrl,
  type FetchDocumentOptions,
  fetchJsonDocument,
  WELL_KNOWN_PATH,
  wellKnownUrl,
} from "./fetch.js";
export {
  CONTRACT_LOADED_EVENT,
  CONTRACT_REFUSED_EVENT,
  type ContractLoadEvent,
  type ContractLoadedBody,
  ContractLoadedBodySchema,
  type ContractRefusedBody,
  ContractRefusedBodySchema,
  contractEventType,
} from "./load-events.js";
export { type PinEntry, type PinStatus, PinStore } from "./pin-store.js";
export type { IntegrityCode, IntegrityFailure, IntegrityResult } from "./result.js";
export { offerPins, type SharedPins } from "./shared-pins.js";
export { decodeSignature, HASH_MODES, type HashMode, signSchemaPin } from "./signature.js";
export {
  type ContractSignatureFile,
  type ContractVerifyOptions,
  parseSignatureFile,
  readSignatureFile,
  SIGNATURE_FILE_SUFFIX,
  type SignContractOptions,
  signatureFilePath,
  signCanonicalContract,
  verifyCanonicalContract,
  writeSignatureFile,
} from "./signature-file.js";
export {
  TRUST_MODES,
  type TrustConfig,
  TrustConfigSchema,
  type TrustMode,
  TrustStore,
  type TrustStoreOptions,
  type TrustSummary,
} from "./trust-store.js";
export {
  type PinOutcome,
  type SignedArtefact,
  type SignedSchemaOptions,
  type TrustOptions,
  type Verified,
  verifyArtefact,
  verifySignedSchema,
} from "./verify.js";
