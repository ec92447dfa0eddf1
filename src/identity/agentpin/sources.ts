// Document sources. Offline: documents handed over directly (CLI `--discovery` files) or a
// trust bundle (§4.8.2); a bundle without a revocation document for a domain means "none".
// Online: `OnlineResolver` asks an injected port for the well-known documents — the
// runtime wires that port through the HTTP executor's SSRF rules; identity itself never
// touches the network — and caches them for their max-age (bounded in size and time).
// `chainSources` is the resolver chain of §4.8.5: the first source that has the domain wins.
import { IdentityError, parseStrictJson } from "../../contracts/index.js";
import { done, fail, type Step } from "./codes.js";
import { isDomainName, parseRevocation, validateDiscovery } from "./discovery.js";
import {
  type DiscoveryDocument,
  type RevocationDocument,
  type TrustBundle,
  TrustBundleSchema,
} from "./schemas.js";
import type { DiscoveryRequest, DocumentSource } from "./source.js";

const entityOf = (raw: unknown): unknown =>
  typeof raw === "object" && raw !== null ? (raw as { entity?: unknown }).entity : undefined;

const notFound = (domain: string) => fail("DISCOVERY_FETCH_FAILED", `no discovery document for ${domain}`);

/** Documents given offline; with `issuerFallback`, an issuer none of them names gets the first one (as the SDKs). */
export class StaticSource implements DocumentSource {
  constructor(
    private readonly documents: readonly unknown[],
    private readonly revocations: readonly unknown[] = [],
    private readonly options: { issuerFallback?: boolean; next?: DocumentSource } = {},
  ) {}

  async discovery(domain: string, request: DiscoveryRequest = {}): Promise<Step<DiscoveryDocument>> {
    const hit = this.documents.find((d) => entityOf(d) === domain);
    if (hit !== undefined) return validateDiscovery(hit, domain);
    if (this.options.next !== undefined) return this.options.next.discovery(domain, request);
    const first = this.documents[0];
    if (request.issuer === true && this.options.issuerFallback === true && first !== undefined) {
      return validateDiscovery(first, domain);
    }
    return notFound(domain);
  }

  async revocation(domain: string, discovery: DiscoveryDocument): Promise<Step<RevocationDocument | null>> {
    const hit = this.revocations.find((r) => entityOf(r) === domain);
    if (hit !== undefined) return parseRevocation(hit);
    // A single revocation document given for the issuer applies whatever it names (as upstream).
    const only = this.revocations.length === 1 ? this.revocations[0] : undefined;
    if (only !== undefined && this.options.issuerFallback === true) return parseRevocation(only);
    if (this.options.next !== undefined) return this.options.next.revocation(domain, discovery);
    return done(null);
  }
}

/** Parses a trust bundle (§4.8.2) into a source; documents are validated when asked for. */
export function trustBundleSource(raw: unknown, next?: DocumentSource): StaticSource {
  const parsed = TrustBundleSchema.safeParse(raw);
  if (!parsed.success) throw new IdentityError("ERR_IDENTITY_CONFIG_INVALID", "not an AgentPin trust bundle");
  const b: TrustBundle = parsed.data;
  return new StaticSource(b.documents, b.revocations, next === undefined ? {} : { next });
}

export function parseTrustBundleText(text: string, next?: DocumentSource): StaticSource {
  let raw: unknown;
  try {
    raw = parseStrictJson(text, { maxLength: 64 * 1024 * 1024 });
  } catch {
    throw new IdentityError("ERR_IDENTITY_CONFIG_INVALID", "trust bundle is not JSON");
  }
  return trustBundleSource(raw, next);
}

/** The network port: GET an https URL (no redirects, SSRF rules), parsed JSON + its max-age. */
export type FetchJson = (
  url: string,
) => Promise<{ ok: true; body: unknown; maxAgeSeconds?: number } | { ok: false; message: string }>;

export interface OnlineResolverOptions {
  fetchJson: FetchJson;
  /** Unix seconds; the verifier's clock. */
  now: () => number;
  /** Cache bounds: entries and the longest max-age honoured (default 256 and 3600 s). */
  maxEntries?: number;
  maxAgeCapSeconds?: number;
  /** Revocation documents are re-read at most this often (default 300 s, §8.3). */
  revocationMaxAgeSeconds?: number;
}

interface Cached<T> {
  value: T;
  until: number;
}

/** The well-known resolver (§4.1, §8.1) with a bounded max-age cache. Fails closed on revocation. */
export class OnlineResolver implements DocumentSource {
  private readonly cache = new Map<string, Cached<unknown>>();
  constructor(private readonly o: OnlineResolverOptions) {}

  async discovery(domain: string, request: DiscoveryRequest = {}): Promise<Step<DiscoveryDocument>> {
    if (!isDomainName(domain)) return fail("DISCOVERY_FETCH_FAILED", "issuer is not an ASCII domain name");
    const url = `https://${domain}/.well-known/agent-identity.json`;
    const got = await this.get(url, request.refresh === true, this.o.maxAgeCapSeconds ?? 3600);
    if (!got.ok) return got;
    return validateDiscovery(got.value, domain);
  }

  async revocation(domain: string, discovery: DiscoveryDocument): Promise<Step<RevocationDocument | null>> {
    const url =
      discovery.revocation_endpoint ?? `https://${domain}/.well-known/agent-identity-revocations.json`;
    if (!url.startsWith("https://"))
      return fail("DISCOVERY_FETCH_FAILED", "revocation endpoint is not https");
    const got = await this.get(url, false, this.o.revocationMaxAgeSeconds ?? 300);
    if (!got.ok)
      return fail("DISCOVERY_FETCH_FAILED", `revocation document unavailable (fail closed): ${got.message}`);
    return parseRevocation(got.value);
  }

  private async get(url: string, refresh: boolean, cap: number): Promise<Step<unknown>> {
    const now = this.o.now();
    const hit = this.cache.get(url);
    if (!refresh && hit !== undefined && hit.until > now) return done(hit.value);
    const r = await this.o.fetchJson(url);
    if (!r.ok) return fail("DISCOVERY_FETCH_FAILED", r.message);
    const age = Math.max(0, Math.min(cap, r.maxAgeSeconds ?? 0));
    this.cache.delete(url);
    if (age > 0) {
      if (this.cache.size >= (this.o.maxEntries ?? 256))
        this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(url, { value: r.body, until: now + age });
    }
    return done(r.body);
  }
}
