// `Authorization: AgentPin <jwt>` (AgentPin §13.1) as an agent credential beside the
// bearer tokens. The runtime's AgentPinAuthenticator verifies the credential and names
// the principal its agent is bound to; this turns that into the sidecar's Identity with
// the verified facts attached (`agent`), which the call routes copy into the Gate request.
// One frozen Identity per (principal, agent, capabilities), bounded, so the per-credential
// rate limiter keys stay few and stable.
import type { AgentIdentityFacts } from "../contracts/index.js";
import type { AgentPinAuthenticator } from "../runtime/index.js";
import type { AuthResult, Identity } from "./auth.js";
import { ApiError } from "./errors.js";

const SCHEME = /^AgentPin ([A-Za-z0-9_.=-]{1,16384})$/;
const MAX_IDENTITIES = 4096;

/** The JWT of an AgentPin Authorization header; undefined for any other scheme. */
export function agentPinToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined || !authorization.startsWith("AgentPin ")) return undefined;
  return SCHEME.exec(authorization)?.[1] ?? "";
}

export class AgentPinIdentities {
  readonly #identities = new Map<string, Identity>();

  constructor(
    private readonly authenticator: AgentPinAuthenticator,
    private readonly roles: (principalId: string) => string[],
  ) {}

  async authenticate(token: string): Promise<AuthResult | { ok: false; error: ApiError }> {
    if (token === "")
      return { ok: false, code: "ERR_AUTH_INVALID", message: "malformed AgentPin credential" };
    const r = await this.authenticator.authenticate(token);
    if (!r.ok) return { ok: false, error: new ApiError(r.code, r.message) };
    return { ok: true, identity: this.#identity(r.principalId, r.identity) };
  }

  #identity(id: string, agent: AgentIdentityFacts): Identity {
    const key = JSON.stringify([id, agent.agentId, agent.domain, agent.capabilities]);
    const known = this.#identities.get(key);
    if (known !== undefined) return known;
    const who: Identity = Object.freeze({
      kind: "agent" as const,
      id,
      roles: Object.freeze(this.roles(id)),
      agent: Object.freeze({ ...agent, capabilities: Object.freeze([...agent.capabilities]) as string[] }),
    });
    if (this.#identities.size >= MAX_IDENTITIES)
      this.#identities.delete(this.#identities.keys().next().value as string);
    this.#identities.set(key, who);
    return who;
  }
}
