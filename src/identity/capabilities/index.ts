// Capability tokens (Ari Kernel): short-lived, signed by the runtime key, scoped to one
// run, principal and tool, within parameter constraints, for a counted number of uses.
export {
  Constraints,
  type ConstraintViolation,
  checkConstraints,
  ParamConstraint,
} from "./constraints.js";
export { DEFAULT_MAX_REVOCATIONS, RevocationFloors, type RevocationFloorsOptions } from "./revocations.js";
export {
  type CapabilityCheck,
  type CapabilityFact,
  type CapabilityGrant,
  type CapabilityRefusalCode,
  CapabilityService,
  type CapabilityServiceOptions,
  DEFAULT_CAPABILITY_TTL_MS,
  type IssuedCapability,
  MAX_CAPABILITY_TTL_MS,
  type PresentedCall,
  scopeName,
  usesKey,
} from "./service.js";
export {
  CAPABILITY_TOKEN_TYPE,
  CapabilityPayload,
  CapabilityScope,
  MAX_TOKEN_LENGTH,
} from "./token.js";
