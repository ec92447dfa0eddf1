// The upstream AgentPin JS SDK (npm `agentpin`, a devDependency used only by these
// interop tests) ships no types; this declares the few functions the cross-checks call.
declare module "agentpin" {
  export interface SdkResult {
    valid: boolean;
    error_code: string | null;
    error_message: string | null;
    agent_id: string | null;
    capabilities: string[] | null;
    key_pinning: { status: string; first_seen: string | null } | null;
  }
  export class KeyPinStore {
    static fromJson(json: string): KeyPinStore;
    toJson(): string;
  }
  export class Capability {
    constructor(value: string);
    value: string;
  }
  export function verifyCredentialOffline(
    jwt: string,
    discovery: unknown,
    revocation: unknown,
    pins: KeyPinStore,
    audience: string | null,
    config?: { clockSkewSecs: number; maxTtlSecs: number },
  ): SdkResult;
  export function issueCredential(
    privateKeyPem: string,
    kid: string,
    issuer: string,
    agentId: string,
    audience: string | null,
    capabilities: Capability[],
    constraints: unknown,
    delegationChain: unknown,
    ttlSecs: number,
  ): string;
  export function verifyAttestation(
    attestation: { domain: string; role: string; agent_id: string; kid: string; attestation: string },
    publicKeyPem: string,
    delegateeDomain: string,
    delegateeAgentId: string,
    capabilities: Capability[],
  ): void;
  export function createAttestation(
    privateKeyPem: string,
    kid: string,
    domain: string,
    role: string,
    agentId: string,
    delegateeDomain: string,
    delegateeAgentId: string,
    capabilities: Capability[],
  ): { domain: string; role: string; agent_id: string; kid: string; attestation: string };
  export function jwkThumbprint(jwk: unknown): string;
  export function generateKeyPair(): { privateKeyPem: string; publicKeyPem: string };
  export function pemToJwk(publicKeyPem: string, kid: string): Record<string, unknown>;
}
