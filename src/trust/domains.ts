// Trust domains (APAE §Cross-Domain Trust): this deployment's trust anchor document, and
// cross-domain delegation under bilateral agreements. Without an agreement for the
// destination domain a delegation is rejected (zero-trust default); with one, the
// delegation is recorded as an `apae:cross_domain_assertion` ECT and the peer agent starts
// at the agreement's default_trust. Cross-domain scores live in their own tables (truster
// `cross-domain:<domain>`), never mixed with the deployment's intra-domain scores.
import { z } from "zod";
import { ECT_LEVELS, type EctInput, type EctLevel } from "./ect.js";
import type { TrustEngine, TrustView } from "./engine.js";
import { freshRow } from "./table.js";

export const CROSS_DOMAIN_ACT = "apae:cross_domain_assertion";

const Domain = z.string().min(1).max(253);

export const TrustAnchorSchema = z.strictObject({
  domain: Domain,
  trust_anchor_type: z.enum(["jwks", "x509"]),
  trust_anchor_uri: z.url({ protocol: /^https?$/ }),
  contact: z.string().min(1).max(320).optional(),
});
export type TrustAnchor = z.infer<typeof TrustAnchorSchema>;

export const AgreementSchema = z.strictObject({
  /** The other domain. */
  domain: Domain,
  /** The agreement's reference (apae.bilateral_agreement_ref). */
  id: z.string().min(1).max(256),
  /** Initial trust in an agent of that domain never seen before. */
  default_trust: z.number().min(0).max(1),
  /** Lowest ECT assurance accepted across it (cross-domain ECTs are L2 or higher). */
  min_assurance: z.enum(["L2", "L3"]).default("L2"),
  /** Fetch the domain's trust anchor before each delegation (cached); it must name the domain. */
  fetch_anchor: z.boolean().default(false),
  /** Where (default https://<domain>/.well-known/apae/trust-anchor). */
  anchor_url: z
    .url({ protocol: /^https$/ })
    .max(2048)
    .optional(),
});
export type Agreement = z.output<typeof AgreementSchema>;

export type DelegationOutcome =
  | { ok: true; ect: EctInput; view: TrustView; agreement: Agreement }
  | { ok: false; code: "ERR_TRUST_DOMAIN_NO_AGREEMENT" | "ERR_TRUST_DOMAIN_ASSURANCE"; message: string };

export const crossDomainTruster = (domain: string): string => `cross-domain:${domain}`;

const rank = (l: EctLevel) => ECT_LEVELS.indexOf(l);

export interface DelegationRequest {
  /** The delegating agent (this domain). */
  from: string;
  /** The agent delegated to, in `domain`. */
  to: string;
  domain: string;
  /** The ECT level this deployment emits at. */
  level: EctLevel;
}

/** Cross-domain delegation under the configured agreements. */
export class TrustDomains {
  readonly self: TrustAnchor | undefined;
  readonly #agreements: Map<string, Agreement>;
  readonly #engine: TrustEngine;

  constructor(engine: TrustEngine, self: TrustAnchor | undefined, agreements: readonly Agreement[]) {
    this.#engine = engine;
    this.self = self;
    this.#agreements = new Map(agreements.map((a) => [a.domain, a]));
  }

  agreementFor(domain: string): Agreement | undefined {
    return this.#agreements.get(domain);
  }

  /** Checks a delegation; on success the cross-domain assertion to emit and the peer's cross-domain view. */
  async delegate(r: DelegationRequest): Promise<DelegationOutcome> {
    const a = this.#agreements.get(r.domain);
    if (a === undefined || this.self === undefined || r.domain === this.self.domain) {
      return {
        ok: false,
        code: "ERR_TRUST_DOMAIN_NO_AGREEMENT",
        message: `no bilateral trust agreement with ${r.domain}: cross-domain delegation refused`,
      };
    }
    if (rank(r.level) < rank(a.min_assurance)) {
      return {
        ok: false,
        code: "ERR_TRUST_DOMAIN_ASSURANCE",
        message: `agreement ${a.id} requires ${a.min_assurance} ECTs; this deployment emits ${r.level}`,
      };
    }
    const truster = crossDomainTruster(r.domain);
    // An agent never seen starts at the agreement's default_trust (not the local initial
    // score), written once so later events in the cross-domain table start from it.
    const now = this.#engine.now();
    const cfg = this.#engine.config;
    await this.#engine.store.update(truster, r.to, (row) =>
      row !== undefined
        ? { result: undefined }
        : { row: { ...freshRow(truster, r.to, now, cfg), score: a.default_trust }, result: undefined },
    );
    const view = await this.#engine.view(r.to, truster, now);
    const ect: EctInput = {
      exec_act: CROSS_DOMAIN_ACT,
      aud: r.domain,
      ext: {
        "apae.source_domain": this.self.domain,
        "apae.dest_domain": r.domain,
        "apae.bilateral_agreement_ref": a.id,
        "apae.min_assurance": a.min_assurance,
        "apae.delegator": r.from,
        "apae.delegatee": r.to,
        "apae.trust_score": view.score,
      },
    };
    return { ok: true, ect, view, agreement: a };
  }
}
