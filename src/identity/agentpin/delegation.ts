// Delegation chains (§3.3, §5.6, §6.4, §10.3). The SDKs carry the helpers but never call
// them; Warden verifies the chain. Entries run outermost (maker) first; entry i attests
// its delegatee, which is entry i+1, and for the last entry the credential's iss/sub.
// Each attestation is a DER ECDSA P-256 signature in padded standard base64 over
// `{domain}|{role}|{agent_id}|{delegatee_domain}|{delegatee_agent_id}|{caps_hash}`.
// Depth is bounded by the smallest max_delegation_depth of every entity in the chain, and
// capabilities only narrow: each level's declared capabilities are covered by its
// delegator's, and a link that widens is refused by name. Every delegator's key and agent
// is checked against its own domain's revocation document (issue 37): a maker that
// revoked the key it attested with, or the agent, revokes every chain through it.

import { capabilitiesHash, firstUncovered } from "./capability.js";
import { done, fail, type Step } from "./codes.js";
import { findAgent, findKey, isDomainName, keyExpiry, revocationFailure } from "./discovery.js";
import { decodeBase64Std } from "./encoding.js";
import { publicKeyOfJwk } from "./jwk.js";
import { verifyDerSignature } from "./jwt.js";
import type { CredentialClaims, DelegationEntry, DiscoveryDocument } from "./schemas.js";
import type { DocumentSource } from "./source.js";

export const MAX_CHAIN_DEPTH = 3;

export interface ChainLink {
  domain: string;
  role: string;
  verified: boolean;
}

/** The string an attestation signs (§5.6). */
export function attestationInput(
  entry: Pick<DelegationEntry, "domain" | "role" | "agent_id">,
  delegatee: { domain: string; agentId: string },
  capabilities: readonly string[],
): string {
  const h = capabilitiesHash(capabilities);
  return `${entry.domain}|${entry.role}|${entry.agent_id}|${delegatee.domain}|${delegatee.agentId}|${h}`;
}

interface Level {
  name: string;
  capabilities: readonly string[];
}

/** Step 10 (§6.1): a chain that verifies, or the failure that names its link. */
export async function verifyDelegationChain(
  claims: CredentialClaims,
  issuerDoc: DiscoveryDocument,
  source: DocumentSource,
  clock: { now: number; skew: number },
): Promise<Step<ChainLink[]>> {
  const chain = claims.delegation_chain ?? [];
  if (chain.length > MAX_CHAIN_DEPTH) {
    return fail(
      "DELEGATION_DEPTH_EXCEEDED",
      `delegation chain of ${chain.length} exceeds ${MAX_CHAIN_DEPTH}`,
    );
  }
  const docs: DiscoveryDocument[] = [];
  for (const [i, e] of chain.entries()) {
    if (!isDomainName(e.domain))
      return fail("DELEGATION_INVALID", `link ${i}: domain is not an ASCII domain`);
    const d = await source.discovery(e.domain);
    if (!d.ok) return { ...d, message: `link ${i} (${e.domain}): ${d.message}` };
    const revoked = await delegatorRevoked(source, e, d.value);
    if (!revoked.ok) return { ...revoked, message: `link ${i} (${e.domain}): ${revoked.message}` };
    docs.push(d.value);
  }
  const maxDepth = Math.min(issuerDoc.max_delegation_depth, ...docs.map((d) => d.max_delegation_depth));
  if (chain.length > maxDepth) {
    return fail("DELEGATION_DEPTH_EXCEEDED", `delegation chain of ${chain.length} exceeds ${maxDepth}`);
  }
  const levels: Level[] = [];
  for (const [i, e] of chain.entries()) {
    const doc = docs[i] as DiscoveryDocument;
    const next = chain[i + 1];
    const delegatee = next
      ? { domain: next.domain, agentId: next.agent_id }
      : { domain: claims.iss, agentId: claims.sub };
    const checked = checkAttestation(i, e, doc, delegatee, { claims, clock });
    if (!checked.ok) return checked;
    levels.push(checked.value);
  }
  const issuerAgent = findAgent(issuerDoc, claims.sub);
  levels.push({ name: `${claims.iss} ${claims.sub}`, capabilities: issuerAgent?.capabilities ?? [] });
  const narrowing = checkNarrowing(levels, claims.capabilities);
  if (!narrowing.ok) return narrowing;
  return done(chain.map((e) => ({ domain: e.domain, role: e.role, verified: true })));
}

/** The delegator's key and agent against its domain's revocation document (absent offline: none). */
async function delegatorRevoked(
  source: DocumentSource,
  e: DelegationEntry,
  doc: DiscoveryDocument,
): Promise<Step<null>> {
  const rev = await source.revocation(e.domain, doc);
  if (!rev.ok) return rev;
  if (rev.value === null) return done(null);
  // No credential of the delegator's is presented here: only its agent and key can be revoked.
  return revocationFailure(rev.value, "", e.agent_id, e.kid);
}

function checkAttestation(
  i: number,
  e: DelegationEntry,
  doc: DiscoveryDocument,
  delegatee: { domain: string; agentId: string },
  ctx: { claims: CredentialClaims; clock: { now: number; skew: number } },
): Step<Level> {
  const bad = (why: string) => fail("DELEGATION_INVALID", `link ${i} (${e.domain}): ${why}`);
  if (e.role !== "maker" && e.role !== "deployer") return bad("role must be maker or deployer");
  const jwk = findKey(doc, e.kid);
  if (jwk === undefined) return bad(`key ${e.kid} not in its discovery document`);
  const exp = keyExpiry(jwk);
  if (exp !== undefined && !(exp >= ctx.clock.now - ctx.clock.skew)) return bad(`key ${e.kid} has expired`);
  const key = publicKeyOfJwk(jwk);
  if (key === null) return bad(`key ${e.kid} is not a P-256 key`);
  const sig = decodeBase64Std(e.attestation);
  const input = attestationInput(e, delegatee, ctx.claims.capabilities);
  if (sig === null || !verifyDerSignature(key, input, sig))
    return bad("attestation signature does not verify");
  const agent = findAgent(doc, e.agent_id);
  if (agent === undefined) return bad(`agent ${e.agent_id} is not declared by ${e.domain}`);
  if (agent.status !== "active") return bad(`agent ${e.agent_id} is ${agent.status}`);
  return done({ name: `${e.domain} ${e.agent_id}`, capabilities: agent.capabilities });
}

/** Each level is covered by the one before it, and the credential by every level. */
function checkNarrowing(levels: readonly Level[], credentialCaps: readonly string[]): Step<null> {
  for (let i = 1; i < levels.length; i++) {
    const parent = levels[i - 1] as Level;
    const child = levels[i] as Level;
    const wider = firstUncovered(parent.capabilities, child.capabilities);
    if (wider !== null) {
      return fail(
        "DELEGATION_INVALID",
        `link ${i - 1} → ${i} (${parent.name} → ${child.name}) widens: ${wider}`,
      );
    }
  }
  for (const [i, level] of levels.entries()) {
    const wider = firstUncovered(level.capabilities, credentialCaps);
    if (wider !== null)
      return fail("DELEGATION_INVALID", `credential widens level ${i} (${level.name}): ${wider}`);
  }
  return done(null);
}
