// Issuing: a domain's discovery document (§4) and credentials (§5) signed exactly as the
// SDKs sign them (DER ES256), plus delegation attestations (§5.6). The upstream SDK
// verifies what these produce (test/interop/agentpin-upstream.test.ts).
import { type KeyObject, randomUUID } from "node:crypto";
import { IdentityError } from "../../contracts/index.js";
import { sign } from "../../crypto/index.js";
import { capabilityProblem } from "./capability.js";
import { attestationInput } from "./delegation.js";
import { isDomainName } from "./discovery.js";
import { agentPinJwkOf } from "./jwk.js";
import { signCredential } from "./jwt.js";
import type { AgentDeclaration, Constraints, DelegationEntry, DiscoveryDocument } from "./schemas.js";

/** `urn:agentpin:{domain}:{name}`; a bare name is placed under the domain. */
export function agentUrn(domain: string, agent: string): string {
  return agent.startsWith("urn:agentpin:") ? agent : `urn:agentpin:${domain}:${agent}`;
}

function assertDomain(domain: string): void {
  if (!isDomainName(domain)) {
    throw new IdentityError(
      "ERR_IDENTITY_CONFIG_INVALID",
      "a domain is lowercase ASCII labels (a-z, 0-9, -)",
    );
  }
}

export interface DiscoveryInit {
  domain: string;
  key: KeyObject;
  kid: string;
  agents?: AgentDeclaration[];
  entityType?: DiscoveryDocument["entity_type"];
  maxDelegationDepth?: number;
  updatedAt: string;
}

export function buildDiscoveryDocument(init: DiscoveryInit): DiscoveryDocument {
  assertDomain(init.domain);
  return {
    agentpin_version: "0.1",
    entity: init.domain,
    entity_type: init.entityType ?? "deployer",
    public_keys: [agentPinJwkOf(init.key, init.kid)],
    agents: init.agents ?? [],
    revocation_endpoint: `https://${init.domain}/.well-known/agent-identity-revocations.json`,
    max_delegation_depth: init.maxDelegationDepth ?? 2,
    updated_at: init.updatedAt,
  };
}

export interface IssueInit {
  privateKey: KeyObject;
  kid: string;
  issuer: string;
  agentId: string;
  capabilities: string[];
  ttlSeconds: number;
  /** Unix seconds. */
  now: number;
  audience?: string | undefined;
  constraints?: Constraints | undefined;
  delegationChain?: DelegationEntry[] | undefined;
  jti?: string | undefined;
}

export function issueCredential(i: IssueInit): string {
  assertDomain(i.issuer);
  if (!Number.isInteger(i.ttlSeconds) || i.ttlSeconds < 1 || i.ttlSeconds > 86_400) {
    throw new IdentityError("ERR_IDENTITY_CONFIG_INVALID", "ttl must be 1s..24h");
  }
  for (const c of i.capabilities) {
    const problem = capabilityProblem(c);
    if (problem !== null)
      throw new IdentityError("ERR_IDENTITY_CONFIG_INVALID", `capability ${c}: ${problem}`);
  }
  return signCredential(i.privateKey, i.kid, {
    iss: i.issuer,
    sub: agentUrn(i.issuer, i.agentId),
    ...(i.audience === undefined ? {} : { aud: i.audience }),
    iat: i.now,
    exp: i.now + i.ttlSeconds,
    jti: i.jti ?? randomUUID(),
    agentpin_version: "0.1",
    capabilities: i.capabilities,
    ...(i.constraints === undefined ? {} : { constraints: i.constraints }),
    ...(i.delegationChain === undefined ? {} : { delegation_chain: i.delegationChain }),
  });
}

/** A delegation entry signed by its delegator over the delegatee and the credential's capabilities. */
export function createAttestation(
  privateKey: KeyObject,
  entry: { domain: string; role: "maker" | "deployer"; agent_id: string; kid: string },
  delegatee: { domain: string; agentId: string },
  capabilities: readonly string[],
): DelegationEntry {
  const der = sign(privateKey, Buffer.from(attestationInput(entry, delegatee, capabilities), "utf8"));
  return { ...entry, attestation: der.toString("base64") };
}
