// A small AgentPin world for the attack tests: domains with real P-256 keys and discovery
// documents, credentials issued by Warden's issuer, and a verifier over offline documents.
import type { KeyObject } from "node:crypto";
import { generateKeyPair } from "../../src/crypto/index.js";
import {
  type AgentDeclaration,
  buildDiscoveryDocument,
  type DiscoveryDocument,
  type DocumentSource,
  type IssueInit,
  issueCredential,
  KeyPinStore,
  StaticSource,
  type VerifyOptions,
  verifyCredential,
} from "../../src/identity/index.js";

export const NOW = 1_800_000_000;

export interface Domain {
  domain: string;
  key: KeyObject;
  kid: string;
  doc: DiscoveryDocument;
  agent: string;
}

export function makeDomain(
  domain: string,
  opts: { capabilities?: string[]; agent?: Partial<AgentDeclaration>; maxDepth?: number; kid?: string } = {},
): Domain {
  const pair = generateKeyPair("p256");
  const kid = opts.kid ?? `${domain}-2026-01`;
  const agent = `urn:agentpin:${domain}:bot`;
  const doc = buildDiscoveryDocument({
    domain,
    key: pair.privateKey,
    kid,
    agents: [
      {
        agent_id: agent,
        name: "bot",
        capabilities: opts.capabilities ?? ["read:*", "write:report"],
        status: "active",
        ...opts.agent,
      },
    ],
    maxDelegationDepth: opts.maxDepth ?? 2,
    updatedAt: "2026-01-01T00:00:00Z",
  });
  return { domain, key: pair.privateKey, kid, doc, agent };
}

export function issue(d: Domain, extra: Partial<IssueInit> = {}): string {
  return issueCredential({
    privateKey: d.key,
    kid: d.kid,
    issuer: d.domain,
    agentId: d.agent,
    capabilities: ["read:data"],
    ttlSeconds: 900,
    now: NOW,
    audience: "verifier.example",
    ...extra,
  });
}

export function verify(
  token: string,
  docs: unknown[],
  extra: Partial<VerifyOptions> & { revocations?: unknown[]; source?: DocumentSource } = {},
) {
  const { revocations, ...rest } = extra;
  return verifyCredential(token, {
    source: new StaticSource(docs, revocations ?? []),
    pins: new KeyPinStore(),
    audience: "verifier.example",
    now: NOW,
    ...rest,
  });
}

/** Re-encodes a token's payload (keeping its signature): what an attacker edits. */
export function withClaims(token: string, edit: (c: Record<string, unknown>) => void): string {
  const [h, p, s] = token.split(".") as [string, string, string];
  const claims = JSON.parse(Buffer.from(p, "base64url").toString()) as Record<string, unknown>;
  edit(claims);
  return `${h}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.${s}`;
}

export function withHeader(token: string, header: Record<string, unknown>): string {
  const [, p, s] = token.split(".") as [string, string, string];
  return `${Buffer.from(JSON.stringify(header)).toString("base64url")}.${p}.${s}`;
}

export const revocationDoc = (entity: string, lists: Record<string, unknown[]>) => ({
  agentpin_version: "0.1",
  entity,
  updated_at: "2026-01-01T00:00:00Z",
  revoked_credentials: [],
  revoked_agents: [],
  revoked_keys: [],
  ...lists,
});
