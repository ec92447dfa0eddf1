// Where the verifier gets documents from: the issuer's and every delegator's discovery
// document, and the issuer's revocation document. Offline sources (files, a trust bundle)
// and the online resolver (src/identity/agentpin/resolver.ts) implement the same port.
import type { Step } from "./codes.js";
import type { DiscoveryDocument, RevocationDocument } from "./schemas.js";

export interface DiscoveryRequest {
  /** True for the credential's issuer (a single offline document is taken as the issuer's). */
  issuer?: boolean;
  /** Bypass a cache: the kid was unknown (§6.2 item 6). */
  refresh?: boolean;
}

export interface DocumentSource {
  /** The validated discovery document of `domain` (DISCOVERY_FETCH_FAILED / DISCOVERY_INVALID otherwise). */
  discovery(domain: string, request?: DiscoveryRequest): Promise<Step<DiscoveryDocument>>;
  /** The domain's revocation document; null when there is none (offline); fails closed online. */
  revocation(domain: string, discovery: DiscoveryDocument): Promise<Step<RevocationDocument | null>>;
}
