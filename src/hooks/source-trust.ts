// Source trust for PrePluginLoad, PreSkillLoad and PreMCPConnect (docs/hooks.md "Source
// trust"). One load is judged in this order:
//   1. a name with invisible/bidi characters, or a look-alike of a trusted name → deny;
//   2. a signature (the event's `signature: {publisher, value}`, SchemaPin ECDSA P-256 over
//      the load's manifest, verified by src/tools' verifySignedSchema with the publisher's
//      configured keys and TOFU key pins): one that does not verify → deny (tampered); a
//      revoked key → deny; a key that differs from the pinned one → `changed`;
//   3. the allow-list entry (kind + id): a publisher it names must have signed; hashes,
//      URI and command it names must match → else `changed`;
//   4. content pins (trust on first use, the same pin store): a trusted source whose files,
//      URI or command differ from the first load's → `changed` (a rug pull);
//   5. a source neither listed, signed nor from a trusted location → `unknown`.
// `unknown` and `changed` answer deny or ask as configured (default ask / deny); skills
// load with `strip_hooks` unless trusted. Distributed mode (`shared`): `decide` offers the
// pins a judgement made to the table every replica shares; a pin another replica made
// first with other content or another key replaces this one's, and the load is judged
// again (`changed`). Decisions are serialised, so none trusts a pin not yet settled.
import type { KeyObject } from "node:crypto";
import { z } from "zod";
import { sha256Hex } from "../contracts/index.js";
import { parsePublicKey } from "../crypto/index.js";
import {
  offerPins,
  type PinEntry,
  type PinStore,
  type SharedPins,
  schemapinCanonical,
  signSchemaPin,
  verifySignedSchema,
} from "../tools/index.js";
import { hasInvisible, lookAlikeOf } from "./source-trust-names.js";

export const SOURCE_KINDS = ["plugin", "skill", "mcp-server"] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];

const Sha256 = z.string().regex(/^(sha256:)?[0-9a-fA-F]{64}$/);
const Domain = z.string().regex(/^[^\s@/]{1,253}$/);
const Disposition = z.enum(["ask", "deny"]);

export const TrustedSourceSchema = z.strictObject({
  kind: z.enum(SOURCE_KINDS),
  /** plugin_id, the skill's name (frontmatter `name`, else the file name) or server_id. */
  id: z.string().min(1).max(512),
  /** The signing domain: a load of this source must carry its valid signature. */
  publisher: Domain.optional(),
  /** The only content hashes accepted (plugin file_hashes, skill file_hash). */
  hashes: z.array(Sha256).max(4096).optional(),
  /** MCP: the only server URI / launch command accepted. */
  uri: z.string().max(4096).optional(),
  command: z.string().max(65_536).optional(),
});
export type TrustedSource = z.infer<typeof TrustedSourceSchema>;

export const SourceTrustConfigSchema = z.strictObject({
  trusted: z.array(TrustedSourceSchema).max(10_000).default([]),
  /** Publisher domain → its ECDSA P-256 public keys (PEM). */
  publishers: z.record(Domain, z.array(z.string().min(1).max(8192)).min(1).max(16)).default({}),
  /** AARTS trust sources trusted by location (host-managed, the user's own). */
  trustedLocations: z
    .array(z.enum(["managed", "user", "project", "marketplace"]))
    .default(["managed", "user"]),
  /** Not listed, not signed, not from a trusted location. */
  unknown: Disposition.default("ask"),
  /** A key, hash, URI or command that differs from the pin or the list (a rug pull). */
  changed: Disposition.default("deny"),
});
export type SourceTrustConfig = z.input<typeof SourceTrustConfigSchema>;

/** What one load presents (from the hook event). */
export interface SourceLoad {
  kind: SourceKind;
  id: string;
  location: string;
  hashes: string[];
  uri?: string | undefined;
  command?: string | undefined;
  signature?: unknown;
}

export type SourceJudgement =
  | { outcome: "trusted"; why: string }
  | { outcome: "unknown" | "changed"; why: string }
  | { outcome: "refused"; rule: string; why: string };

/** The manifest a publisher signs for a load (SchemaPin canonical JSON of this object). */
export function sourceManifest(load: SourceLoad): Record<string, unknown> {
  return {
    kind: load.kind,
    id: load.id,
    hashes: [...new Set(load.hashes.map(normalHash))].sort(),
    ...(load.uri ? { uri: load.uri } : {}),
    ...(load.command ? { command: load.command } : {}),
  };
}

/** A publisher's signature of a load, in the event's `signature.value` form. */
export function signSourceManifest(privateKey: KeyObject, load: SourceLoad): string {
  return signSchemaPin(privateKey, sourceManifest(load));
}

const normalHash = (h: string) => h.toLowerCase().replace(/^sha256:/, "");

const SignatureSchema = z.strictObject({ publisher: Domain, value: z.string().min(1).max(256) });

export class SourceTrust {
  readonly config: z.output<typeof SourceTrustConfigSchema>;
  readonly #keys = new Map<string, KeyObject[]>();
  /** The tail of the serialised decisions (distributed mode), and whether pins were seeded. */
  #queue: Promise<unknown> = Promise.resolve();
  #seeded = false;

  constructor(
    config: SourceTrustConfig,
    readonly pins: PinStore,
    readonly shared?: SharedPins,
  ) {
    this.config = SourceTrustConfigSchema.parse(config);
    for (const [domain, pems] of Object.entries(this.config.publishers)) {
      this.#keys.set(
        domain,
        pems.map((p) => parsePublicKey(p)),
      );
    }
  }

  #trustedNames(kind: SourceKind): string[] {
    return this.config.trusted.filter((t) => t.kind === kind).map((t) => t.id);
  }

  /** Step 2: a verified publisher, a refusal, `changed`, or nothing (no usable signature). */
  #signature(load: SourceLoad): { publisher: string } | SourceJudgement | undefined {
    if (load.signature === undefined) return undefined;
    const sig = SignatureSchema.safeParse(load.signature);
    if (!sig.success)
      return {
        outcome: "refused",
        rule: "aarts-source-signature-invalid",
        why: "the signature field is malformed",
      };
    const keys = this.#keys.get(sig.data.publisher);
    if (keys === undefined) return undefined;
    const r = verifySignedSchema(
      { schema: sourceManifest(load), signature: sig.data.value },
      { domain: sig.data.publisher, toolId: `${load.kind}:${load.id}`, trustedKeys: keys, pins: this.pins },
    );
    if (r.ok) return { publisher: sig.data.publisher };
    if (r.code === "ERR_INTEGRITY_KEY_PIN_MISMATCH") return { outcome: "changed", why: r.message };
    return { outcome: "refused", rule: "aarts-source-signature-invalid", why: `${r.code}: ${r.message}` };
  }

  /** Step 3: the listed source's constraints. */
  #listed(entry: TrustedSource, load: SourceLoad, publisher: string | undefined): SourceJudgement {
    if (entry.publisher !== undefined && entry.publisher !== publisher) {
      return {
        outcome: "refused",
        rule: "aarts-source-unsigned",
        why: `must be signed by ${entry.publisher}`,
      };
    }
    if (entry.hashes !== undefined) {
      const allowed = new Set(entry.hashes.map(normalHash));
      const stray = load.hashes.map(normalHash).filter((h) => !allowed.has(h));
      if (stray.length > 0 || load.hashes.length === 0)
        return { outcome: "changed", why: "its files differ from the allow-list's hashes" };
    }
    if (entry.uri !== undefined && entry.uri !== load.uri)
      return { outcome: "changed", why: "its URI differs from the allow-list's" };
    if (entry.command !== undefined && entry.command !== load.command) {
      return { outcome: "changed", why: "its launch command differs from the allow-list's" };
    }
    return { outcome: "trusted", why: publisher ? `listed and signed by ${publisher}` : "on the allow-list" };
  }

  /** Step 4: trust on first use of what the source is (files, URI, command). */
  #contentPin(load: SourceLoad): SourceJudgement | undefined {
    const m = sourceManifest(load);
    if ((m.hashes as string[]).length === 0 && !load.uri && !load.command) return undefined;
    const fp = sha256Hex(schemapinCanonical(m));
    // Key pins are (kind:id, publisher); content pins (content:kind:id, "warden") never collide.
    const key = `content:${load.kind}:${load.id}`;
    const status = this.pins.check(key, "warden", fp);
    if (status === "changed")
      return { outcome: "changed", why: "its files, URI or command changed since it was first trusted" };
    if (status === "first_use") this.pins.pin(key, "warden", fp);
    return undefined;
  }

  /** The (tool, domain) pairs judging `load` may pin: its signing key's and its content's. */
  #pinPairs(load: SourceLoad): [string, string][] {
    const pairs: [string, string][] = [[`content:${load.kind}:${load.id}`, "warden"]];
    const sig = SignatureSchema.safeParse(load.signature);
    if (sig.success) pairs.push([`${load.kind}:${load.id}`, sig.data.publisher]);
    return pairs;
  }

  /**
   * `judge`, with the pins shared when `shared` is set: the first decision seeds the local
   * pins from the table; a pin that lost to another replica's is replaced by the winner
   * and the load judged again. Throws the shared store's error (the caller fails closed).
   */
  decide(load: SourceLoad): Promise<SourceJudgement> {
    const shared = this.shared;
    if (shared === undefined) return Promise.resolve(this.judge(load));
    const run = this.#queue.then(() => this.#decideShared(load, shared));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #decideShared(load: SourceLoad, shared: SharedPins): Promise<SourceJudgement> {
    if (!this.#seeded) {
      for (const e of await shared.load())
        if (this.pins.get(e.toolId, e.domain) === undefined) this.pins.pin(e.toolId, e.domain, e.fingerprint);
      this.#seeded = true;
    }
    const pairs = this.#pinPairs(load);
    const before = pairs.map(([t, d]) => this.pins.get(t, d));
    const judgement = this.judge(load);
    const created = pairs
      .filter(([t, d], i) => before[i] === undefined && this.pins.get(t, d) !== undefined)
      .map(([t, d]) => this.pins.get(t, d) as PinEntry);
    if (created.length === 0) return judgement;
    try {
      const lost = await offerPins(this.pins, created, shared);
      return lost.length === 0 ? judgement : this.judge(load);
    } catch (err) {
      // Unsettled pins are forgotten: the next decision offers them again.
      for (const e of created) this.pins.unpin(e.toolId, e.domain);
      throw err;
    }
  }

  judge(load: SourceLoad): SourceJudgement {
    if (hasInvisible(load.id)) {
      return {
        outcome: "refused",
        rule: "aarts-source-lookalike",
        why: "its name carries invisible or bidirectional characters",
      };
    }
    const imitated = lookAlikeOf(load.id, this.#trustedNames(load.kind));
    if (imitated !== undefined) {
      return {
        outcome: "refused",
        rule: "aarts-source-lookalike",
        why: `its name imitates the trusted ${imitated}`,
      };
    }
    const sig = this.#signature(load);
    if (sig !== undefined && "outcome" in sig) return sig;
    const publisher = sig?.publisher;
    const entry = this.config.trusted.find((t) => t.kind === load.kind && t.id === load.id);
    let base: SourceJudgement;
    if (entry) base = this.#listed(entry, load, publisher);
    else if (publisher) base = { outcome: "trusted", why: `signed by ${publisher}` };
    else if ((this.config.trustedLocations as string[]).includes(load.location)) {
      base = { outcome: "trusted", why: `from a ${load.location} source` };
    } else
      base = {
        outcome: "unknown",
        why: `from a ${load.location} source, not on the allow-list and not signed`,
      };
    if (base.outcome !== "trusted") return base;
    return this.#contentPin(load) ?? base;
  }
}
