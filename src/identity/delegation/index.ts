// Delegation grants for sub-agents: signed, depth-bounded, narrowing-only chains of links
// (Warden's own format; AgentPin's attestation chain is separate, see docs/identity.md).
export {
  type ChainVerification,
  chainJson,
  DEFAULT_MAX_DEPTH,
  DELEGATION_LINK_TYPE,
  DelegationLink,
  DelegationPayload,
  type DelegationRefusalCode,
  type IssueLinkInput,
  issueLink,
  linkHash,
  type VerifyChainOptions,
  verifyChain,
} from "./chain.js";
export {
  BUDGET_NAMES,
  callCovered,
  DelegatedGrant,
  type DelegatedGrantInput,
  type GrantField,
  toolCovers,
  toolsCover,
  widening,
} from "./grant.js";
