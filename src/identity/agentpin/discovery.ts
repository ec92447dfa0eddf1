// Discovery and revocation documents (§4, §8): validated for the domain they were asked
// for. A domain is lowercase ASCII LDH labels only, so a Unicode look-alike (Cyrillic
// "е" for "e") is never a domain Warden resolves or accepts as an entity.
import { done, fail, type Step } from "./codes.js";
import {
  type AgentDeclaration,
  type AgentPinJwk,
  type DiscoveryDocument,
  DiscoverySchema,
  type RevocationDocument,
  RevocationSchema,
} from "./schemas.js";

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** A lowercase ASCII hostname (LDH labels, at most 253 characters). */
export function isDomainName(domain: string): boolean {
  return domain.length > 0 && domain.length <= 253 && domain.split(".").every((l) => LABEL.test(l));
}

/** §6.1 step 3: the document parses, is version 0.1, is for `domain`, has keys, depth 0..3. */
export function validateDiscovery(raw: unknown, domain: string): Step<DiscoveryDocument> {
  const parsed = DiscoverySchema.safeParse(raw);
  if (!parsed.success) return fail("DISCOVERY_INVALID", "discovery document does not match its schema");
  const doc = parsed.data;
  if (doc.agentpin_version !== "0.1") {
    return fail("DISCOVERY_INVALID", `unsupported agentpin_version ${JSON.stringify(doc.agentpin_version)}`);
  }
  if (!isDomainName(domain)) return fail("DISCOVERY_INVALID", "issuer is not an ASCII domain name");
  if (doc.entity !== domain) {
    // DOMAIN_MISMATCH, reported as DISCOVERY_INVALID as the offline verify of every SDK does.
    return fail("DISCOVERY_INVALID", `discovery entity ${JSON.stringify(doc.entity)} is not ${domain}`);
  }
  if (doc.public_keys.length === 0) return fail("DISCOVERY_INVALID", "discovery document has no keys");
  if (doc.max_delegation_depth < 0 || doc.max_delegation_depth > 3) {
    return fail("DISCOVERY_INVALID", "max_delegation_depth must be 0..3");
  }
  return done(doc);
}

export function findKey(doc: DiscoveryDocument, kid: string): AgentPinJwk | undefined {
  return doc.public_keys.find((k) => k.kid === kid);
}

export function findAgent(doc: DiscoveryDocument, agentId: string): AgentDeclaration | undefined {
  return doc.agents.find((a) => a.agent_id === agentId);
}

/**
 * A revocation document whose lists parse; anything else fails closed. Like the SDKs, only
 * the lists are read (a missing entity, date or reason does not stop a revocation).
 */
export function parseRevocation(raw: unknown): Step<RevocationDocument> {
  const parsed = RevocationSchema.safeParse(raw);
  const version = parsed.success ? parsed.data.agentpin_version : undefined;
  if (!parsed.success || (version !== undefined && version !== "0.1")) {
    return fail("DISCOVERY_INVALID", "revocation document does not match its schema");
  }
  return done(parsed.data);
}

/** §6.1 step 6 in the SDKs' order: jti, then the agent, then the key. */
export function revocationFailure(
  doc: RevocationDocument,
  jti: string,
  agentId: string,
  kid: string,
): Step<null> {
  if (doc.revoked_credentials.some((r) => r.jti === jti)) {
    return fail("CREDENTIAL_REVOKED", "the credential (jti) is revoked");
  }
  if (doc.revoked_agents.some((r) => r.agent_id === agentId)) {
    return fail("AGENT_INACTIVE", `agent ${agentId} is revoked`);
  }
  if (doc.revoked_keys.some((r) => r.kid === kid)) return fail("KEY_REVOKED", `key ${kid} is revoked`);
  return done(null);
}

/** The JWK's `exp` (RFC 3339) as Unix seconds; undefined without one, NaN when unreadable. */
export function keyExpiry(jwk: AgentPinJwk): number | undefined {
  if (jwk.exp === undefined) return undefined;
  return Date.parse(jwk.exp) / 1000;
}
