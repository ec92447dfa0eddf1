// Remote trust anchors of peer domains (APAE §Cross-Domain Trust): before a cross-domain
// delegation under an agreement that names the peer's anchor (`anchor_url`, by default
// https://<domain>/.well-known/apae/trust-anchor), the peer domain's anchor document is
// fetched through the executors' SSRF rules (agentPinFetcher: https only, the address
// resolved once, checked and pinned, no redirects, a byte cap, a timeout), parsed strictly,
// and must name that domain. Answers are cached (the document's max-age, clamped; at most
// one entry per agreement); a failure is not cached and refuses the delegation.

import type { FetchJson } from "../identity/index.js";
import { type TrustAnchor, TrustAnchorSchema } from "../trust/index.js";

export type AnchorResult =
  | { ok: true; anchor: TrustAnchor; cached: boolean }
  | { ok: false; code: "ERR_TRUST_DOMAIN_ANCHOR_UNAVAILABLE"; message: string };

export interface AnchorCacheOptions {
  fetch: FetchJson;
  clock: () => number;
  /** Lifetime of a document without max-age (default 300 s); max-age is clamped to `maxTtlSeconds` (3600). */
  defaultTtlSeconds?: number;
  maxTtlSeconds?: number;
  /** Domains cached at once (default 256, the oldest dropped). */
  maxEntries?: number;
}

export const anchorUrlOf = (domain: string): string => `https://${domain}/.well-known/apae/trust-anchor`;

export class TrustAnchorCache {
  readonly #o: AnchorCacheOptions;
  readonly #cache = new Map<string, { anchor: TrustAnchor; until: number }>();
  readonly #inflight = new Map<string, Promise<AnchorResult>>();

  constructor(o: AnchorCacheOptions) {
    this.#o = o;
  }

  /** The anchor of `domain` from `url` (cached while fresh; concurrent asks share one fetch). */
  anchorOf(domain: string, url: string = anchorUrlOf(domain)): Promise<AnchorResult> {
    const now = this.#o.clock();
    const hit = this.#cache.get(domain);
    if (hit !== undefined && hit.until > now)
      return Promise.resolve({ ok: true, anchor: hit.anchor, cached: true });
    const running = this.#inflight.get(domain);
    if (running !== undefined) return running;
    const p = this.#fetch(domain, url).finally(() => this.#inflight.delete(domain));
    this.#inflight.set(domain, p);
    return p;
  }

  async #fetch(domain: string, url: string): Promise<AnchorResult> {
    const fail = (message: string): AnchorResult => ({
      ok: false,
      code: "ERR_TRUST_DOMAIN_ANCHOR_UNAVAILABLE",
      message: `trust anchor of ${domain}: ${message}`,
    });
    const r = await this.#o.fetch(url);
    if (!r.ok) return fail(r.message);
    const doc = TrustAnchorSchema.safeParse(r.body);
    if (!doc.success) return fail("not a trust anchor document");
    if (doc.data.domain !== domain) return fail(`the document names ${doc.data.domain}`);
    const ttl = Math.min(r.maxAgeSeconds ?? this.#o.defaultTtlSeconds ?? 300, this.#o.maxTtlSeconds ?? 3600);
    this.#cache.delete(domain);
    this.#cache.set(domain, { anchor: doc.data, until: this.#o.clock() + ttl * 1000 });
    const max = this.#o.maxEntries ?? 256;
    while (this.#cache.size > max) this.#cache.delete(this.#cache.keys().next().value as string);
    return { ok: true, anchor: doc.data, cached: false };
  }
}
