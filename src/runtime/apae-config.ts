// The `apae:` section of an entry point's configuration file (`warden sidecar`,
// `warden run --config`): APAE turned on without code. Absent means off. Validated
// strictly (an unknown key is refused, naming it); relative paths are relative to the file.
import { readFileSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { z } from "zod";
import { TrustError } from "../contracts/index.js";
import {
  AgreementSchema,
  PROFILE_MECHANISMS,
  ProfileSchema,
  TrustAnchorSchema,
  type TrustConfig,
  TrustConfigSchema,
  weakerOverrides,
} from "../trust/index.js";
import type { RuntimeApaeConfig } from "./apae.js";

export const ApaeSectionSchema = z.strictObject({
  /** Trust engine settings over the spec defaults (docs/trust.md, Configuration). */
  settings: TrustConfigSchema.optional(),
  /** SQLite trust table file; default `<journal>.trust.db`. */
  store: z.string().min(1).max(4096).optional(),
  /** How often due quarantines are ended, in ms. */
  tickMs: z.number().int().min(100).max(86_400_000).optional(),
  /** Level of the runtime's action ECTs (default: the profile's). */
  ectLevel: z.enum(["L1", "L2", "L3"]).optional(),
  /** The fetch of peer domains' trust anchors (agreements with fetch_anchor); SSRF rules always apply. */
  anchorFetch: z
    .strictObject({
      timeoutMs: z.number().int().min(100).max(60_000).optional(),
      maxBytes: z.number().int().min(256).max(1_048_576).optional(),
      /** Let a peer domain resolve to loopback (a local test deployment); never private or metadata. */
      allowLoopback: z.boolean().optional(),
      /** Extra CA certificates (PEM file) for the peers' TLS. */
      ca: z.string().min(1).max(4096).optional(),
    })
    .optional(),
  /** Retries of notifications to peers: attempts in all, first backoff and its cap (ms). */
  delivery: z
    .strictObject({
      attempts: z.number().int().min(1).max(10).optional(),
      backoffMs: z.number().int().min(1).max(600_000).optional(),
      maxBackoffMs: z.number().int().min(1).max(3_600_000).optional(),
    })
    .optional(),
  /** Rate limit of the unauthenticated POST /v1/apae/notify: per source address per minute, sources tracked. */
  notify: z
    .strictObject({
      perMinute: z.number().int().min(1).max(100_000).optional(),
      maxSources: z.number().int().min(1).max(1_000_000).optional(),
    })
    .optional(),
  /** This deployment's ECT identity: issuer id and P-256 private key file (0600). */
  ect: z.strictObject({ issuer: z.string().min(1).max(256), key: z.string().min(1).max(4096) }).optional(),
  /** Peer deployments: id (their ECT issuer), sidecar base URL, P-256 public key file. */
  peers: z
    .array(
      z.strictObject({
        id: z.string().min(1).max(256),
        url: z.url({ protocol: /^https?$/ }),
        key: z.string().min(1).max(4096),
      }),
    )
    .max(256)
    .optional(),
  /** This deployment's trust anchor document (GET /.well-known/apae/trust-anchor). */
  domain: TrustAnchorSchema.optional(),
  /** Bilateral trust agreements with other domains. */
  agreements: z.array(AgreementSchema).max(256).optional(),
  /** The assurance profile (relaxed / standard / regulated; default standard). */
  profile: ProfileSchema.optional(),
  /** Per-workflow / per-tool profiles: only stricter than `profile`. */
  overrides: z
    .strictObject({
      workflows: z.record(z.string().min(1).max(256), ProfileSchema).optional(),
      tools: z.record(z.string().min(1).max(256), ProfileSchema).optional(),
    })
    .optional(),
  /** Behaviour verification: Ed25519 public key files of the spec signers, signed spec files. */
  behavior: z
    .strictObject({
      keys: z.array(z.string().min(1).max(4096)).max(64).default([]),
      specs: z.array(z.string().min(1).max(4096)).max(1024).default([]),
    })
    .optional(),
});
export type ApaeSection = z.output<typeof ApaeSectionSchema>;

/** Parses an `apae:` section; ERR_TRUST_CONFIG_INVALID naming the offending key. */
export function parseApaeSection(input: unknown, baseDir: string): RuntimeApaeConfig {
  const res = ApaeSectionSchema.safeParse(input ?? {});
  if (!res.success) {
    const issue = res.error.issues[0];
    throw new TrustError(
      "ERR_TRUST_CONFIG_INVALID",
      `apae config invalid at apae.${issue?.path.map(String).join(".") ?? ""}: ${issue?.message ?? "invalid"}`,
    );
  }
  const s = res.data;
  const weaker = weakerOverrides(s.profile ?? "standard", dropUndefined(s.overrides ?? {}));
  if (weaker.length > 0) {
    throw new TrustError(
      "ERR_TRUST_CONFIG_INVALID",
      `apae.overrides may only be stricter than the profile ${s.profile ?? "standard"}: ${weaker.join(", ")}`,
    );
  }
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(baseDir, p));
  return {
    ...(s.ect !== undefined ? { ect: { issuer: s.ect.issuer, key: abs(s.ect.key) } } : {}),
    ...(s.peers !== undefined ? { peers: s.peers.map((p) => ({ ...p, key: abs(p.key) })) } : {}),
    ...(s.settings !== undefined ? { settings: s.settings } : {}),
    ...(s.store !== undefined ? { store: abs(s.store) } : {}),
    ...(s.tickMs !== undefined ? { tickMs: s.tickMs } : {}),
    ...(s.ectLevel !== undefined ? { ectLevel: s.ectLevel } : {}),
    ...(s.notify !== undefined ? { notify: dropUndefined(s.notify) } : {}),
    ...(s.delivery !== undefined ? { delivery: dropUndefined(s.delivery) } : {}),
    ...(s.anchorFetch !== undefined ? { anchorFetch: anchorFetchOf(s.anchorFetch, abs) } : {}),
    ...(s.domain !== undefined ? { domain: s.domain } : {}),
    ...(s.agreements !== undefined ? { agreements: s.agreements } : {}),
    ...(s.profile !== undefined ? { profile: s.profile } : {}),
    ...(s.overrides !== undefined ? { overrides: dropUndefined(s.overrides) } : {}),
    ...(s.behavior !== undefined
      ? { behavior: { keys: s.behavior.keys.map(abs), specs: s.behavior.specs.map(abs) } }
      : {}),
  };
}

function anchorFetchOf(
  a: NonNullable<ApaeSection["anchorFetch"]>,
  abs: (p: string) => string,
): NonNullable<RuntimeApaeConfig["anchorFetch"]> {
  const { ca, ...rest } = dropUndefined(a);
  if (ca === undefined) return rest;
  try {
    return { ...rest, ca: readFileSync(abs(ca), "utf8") };
  } catch (err) {
    throw new TrustError("ERR_TRUST_CONFIG_INVALID", `apae.anchorFetch.ca: cannot read ${ca}`, {
      cause: err,
    });
  }
}

function dropUndefined<T extends object>(o: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]: Exclude<T[K], undefined>;
  };
}

/** What an `apae` configuration turns on, for `warden sidecar --check`. */
export interface ApaeSummary {
  profile: string;
  store: string;
  settings: TrustConfig;
  mechanisms: string[];
  /** Required mechanisms the deployment lacks under its profile (--check fills it in). */
  gaps?: string[];
}

export function summarizeApae(config: RuntimeApaeConfig, journalPath: string): ApaeSummary {
  const settings = TrustConfigSchema.parse(config.settings ?? {});
  const profile = config.profile ?? "standard";
  const m = PROFILE_MECHANISMS[profile];
  return {
    profile,
    store: config.store ?? `${journalPath}.trust.db`,
    settings,
    mechanisms: [
      `profile ${profile}: ${Object.entries(m)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")}`,
      `trust scoring (alpha ${settings.alpha}, beta ${settings.beta}, initial ${settings.initial_score})`,
      `revocation below ${settings.revocation_floor} (apae:trust_revoke, revocation hooks)`,
      `quarantine below ${settings.quarantine_floor} (${settings.quarantine_base_hours} h doubling to ${settings.quarantine_max_hours} h)`,
      "policy facts apae.peer_trust_score / min_trust / min_confidence",
      `an ECT per governed decision and outcome at ${config.ectLevel ?? m.ect_level}` +
        `${(config.ectLevel ?? m.ect_level) === "L1" ? "" : ` (ES256, key ${config.ect?.key ?? `${journalPath}.ect-key.pem`})`}` +
        `${(config.ectLevel ?? m.ect_level) === "L3" ? ", in the journal ledger" : ""}; behaviour specs and denials feed trust`,
      `notify route limit ${config.notify?.perMinute ?? 60}/min per source (${config.notify?.maxSources ?? 4096} sources tracked); ` +
        `notification attempts ${config.delivery?.attempts ?? 4}`,
      ...(config.ect !== undefined
        ? [
            `signed (L2) ECTs as ${config.ect.issuer}; quarantine broadcast to peers: ${(config.peers ?? []).map((p) => p.id).join(", ") || "-"}`,
          ]
        : []),
    ],
  };
}
