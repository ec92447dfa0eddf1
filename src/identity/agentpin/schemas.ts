// Wire formats of AgentPin (protocol 0.1) as zod schemas: the discovery document (§4,
// Appendix A), the revocation document (§8.2), the credential's header and claims (§5),
// the trust bundle (§4.8.2) and the upstream KeyPinStore JSON (§7.4). Unknown members are
// kept (the Rust SDK ignores them), required ones and their types are enforced, and every
// list is bounded so a hostile document cannot make the verifier do unbounded work.
import { z } from "zod";

const MAX_KEYS = 64;
const MAX_AGENTS = 4096;
const MAX_CAPS = 256;
const MAX_REVOKED = 100_000;
const str = (max = 1024) => z.string().max(max);

export const JwkSchema = z.looseObject({
  kid: str(128),
  kty: z.string(),
  crv: z.string(),
  x: str(128),
  y: str(128),
  use: z.string().optional(),
  key_ops: z.array(str(64)).max(16).optional(),
  /** RFC 3339 text, not a NumericDate (§4.4). */
  exp: str(64).optional(),
});
export type AgentPinJwk = z.infer<typeof JwkSchema>;

const CapabilityList = z.array(str(512)).max(MAX_CAPS);

export const ConstraintsSchema = z.looseObject({
  allowed_domains: z.array(str(253)).max(1024).optional(),
  denied_domains: z.array(str(253)).max(1024).optional(),
  rate_limit: str(64).optional(),
  data_classification_max: str(64).optional(),
  ip_allowlist: z.array(str(64)).max(1024).optional(),
  valid_hours: z.unknown().optional(),
});
export type Constraints = z.infer<typeof ConstraintsSchema>;

export const AgentDeclarationSchema = z.looseObject({
  agent_id: str(512),
  agent_type: str(512).optional(),
  name: str(256),
  description: str(4096).optional(),
  version: str(128).optional(),
  capabilities: CapabilityList,
  constraints: ConstraintsSchema.nullish(),
  maker_attestation: str(4096).optional(),
  credential_ttl_max: z.number().int().optional(),
  status: z.enum(["active", "suspended", "deprecated"]),
  directory_listing: z.boolean().optional(),
});
export type AgentDeclaration = z.infer<typeof AgentDeclarationSchema>;

export const DiscoverySchema = z.looseObject({
  agentpin_version: z.string(),
  entity: str(253),
  entity_type: z.enum(["maker", "deployer", "both"]),
  public_keys: z.array(JwkSchema).max(MAX_KEYS),
  agents: z.array(AgentDeclarationSchema).max(MAX_AGENTS),
  revocation_endpoint: str(2048).optional(),
  policy_url: str(2048).optional(),
  schemapin_endpoint: str(2048).optional(),
  a2a_endpoint: str(2048).optional(),
  max_delegation_depth: z.number().int(),
  updated_at: str(64),
});
export type DiscoveryDocument = z.infer<typeof DiscoverySchema>;

// Revocation entries need only the key they revoke: a list entry missing its metadata
// still revokes (lenient in the fail-closed direction); `revoked_at` and `reason` are kept.
const revokedFields = { revoked_at: str(64).optional(), reason: str(64).optional() };
const RevokedCredential = z.looseObject({ jti: str(128), ...revokedFields });
const RevokedAgent = z.looseObject({ agent_id: str(512), ...revokedFields });
const RevokedKey = z.looseObject({ kid: str(128), ...revokedFields });

export const RevocationSchema = z.looseObject({
  agentpin_version: z.string().optional(),
  entity: str(253).optional(),
  updated_at: str(64).optional(),
  revoked_credentials: z.array(RevokedCredential).max(MAX_REVOKED).default([]),
  revoked_agents: z.array(RevokedAgent).max(MAX_REVOKED).default([]),
  revoked_keys: z.array(RevokedKey).max(MAX_REVOKED).default([]),
});
export type RevocationDocument = z.infer<typeof RevocationSchema>;

export const HeaderSchema = z.looseObject({ alg: z.string(), typ: z.string(), kid: str(128) });
export type CredentialHeader = z.infer<typeof HeaderSchema>;

export const DelegationEntrySchema = z.looseObject({
  domain: str(253),
  role: z.string(),
  agent_id: str(512),
  kid: str(128),
  attestation: str(512),
});
export type DelegationEntry = z.infer<typeof DelegationEntrySchema>;

const numericDate = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

export const ClaimsSchema = z.looseObject({
  iss: str(253),
  sub: str(512),
  aud: str(253).optional(),
  iat: numericDate,
  exp: numericDate,
  nbf: numericDate.optional(),
  jti: str(128),
  agentpin_version: z.string(),
  capabilities: CapabilityList,
  constraints: ConstraintsSchema.optional(),
  delegation_chain: z.array(DelegationEntrySchema).max(16).optional(),
  nonce: str(256).optional(),
});
export type CredentialClaims = z.infer<typeof ClaimsSchema>;

export const TrustBundleSchema = z.looseObject({
  agentpin_bundle_version: z.literal("0.1"),
  created_at: str(64),
  documents: z.array(z.unknown()).max(10_000),
  revocations: z.array(z.unknown()).max(10_000).default([]),
});
export type TrustBundle = z.infer<typeof TrustBundleSchema>;

/**
 * A pinned key as the SDKs write it. Only the hash is needed to check a key; the other
 * members are kept as written (a store from another SDK version loads), hex is compared
 * in lowercase.
 */
export const PinnedKeySchema = z.looseObject({
  kid: str(128).optional(),
  public_key_hash: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/)
    .transform((h) => h.toLowerCase()),
  first_seen: str(64).optional(),
  last_seen: str(64).optional(),
  trust_level: str(32).optional(),
});
export type PinnedKey = z.infer<typeof PinnedKeySchema>;

export const PinStoreSchema = z.array(
  z.looseObject({ domain: str(253), pinned_keys: z.array(PinnedKeySchema).max(MAX_KEYS) }),
);
