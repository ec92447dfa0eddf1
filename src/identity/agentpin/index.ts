// Public face of AgentPin inside the identity layer (re-exported by src/identity/index.ts).
export {
  capabilitiesHash,
  capabilitiesSubset,
  capabilityCovers,
  capabilityMatches,
  capabilityProblem,
  constraintsSubsetOf,
  domainPatternMatches,
  firstUncovered,
  parseCapability,
  rateLimitPerHour,
} from "./capability.js";
export { AGENTPIN_CODES, type AgentPinCode, type IdentityVerifyCode, wardenCodeOf } from "./codes.js";
export { attestationInput, type ChainLink, MAX_CHAIN_DEPTH } from "./delegation.js";
export { findAgent, findKey, isDomainName, parseRevocation, validateDiscovery } from "./discovery.js";
export { type DnsTxtRecord, dnsTxtMatches, dnsTxtName, parseDnsTxt } from "./dns.js";
export { decodeBase64Std, decodeBase64Url, encodeBase64Url } from "./encoding.js";
export {
  agentUrn,
  buildDiscoveryDocument,
  createAttestation,
  type DiscoveryInit,
  type IssueInit,
  issueCredential,
} from "./issue.js";
export { agentPinJwkOf, pinHashOf, publicKeyOfJwk, spkiKeyIdOf } from "./jwk.js";
export {
  CREDENTIAL_TYP,
  MAX_CREDENTIAL_LENGTH,
  type ParsedCredential,
  parseCredential,
  signCredential,
  verifyDerSignature,
} from "./jwt.js";
export { KeyPinStore, type KeyPins, type PinCheck, type PinEvent, type PinUse } from "./pins.js";
export type {
  AgentDeclaration,
  AgentPinJwk,
  Constraints,
  CredentialClaims,
  DelegationEntry,
  DiscoveryDocument,
  RevocationDocument,
} from "./schemas.js";
export type { DiscoveryRequest, DocumentSource } from "./source.js";
export {
  type FetchJson,
  OnlineResolver,
  type OnlineResolverOptions,
  parseTrustBundleText,
  StaticSource,
  trustBundleSource,
} from "./sources.js";
export {
  type AgentIdentity,
  DEFAULT_MAX_TTL_SECONDS,
  DEFAULT_SKEW_SECONDS,
  MAX_SKEW_SECONDS,
  type Verification,
  type VerificationResult,
  type VerifyOptions,
  verifyCredential,
} from "./verify.js";
