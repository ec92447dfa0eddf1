// The trust engine's settings: APAE §Trust Scoring and §Quarantine defaults, overridable
// per deployment. Keys are the snake_case names the docs and `--config` files use; an
// unknown key is refused (a typo must not silently keep a default), and the floors and
// scores are checked against each other so a configuration cannot, say, quarantine above
// the revocation floor without saying so.
import { z } from "zod";
import { isPlainObject, TrustError } from "../contracts/index.js";

const Unit = z.number().min(0).max(1);
const Positive = z.number().positive().max(1e6);

export const TrustConfigSchema = z
  .strictObject({
    /** Who "the deployment itself" is when an event names no truster. */
    self_id: z.string().min(1).max(256).default("deployment"),
    /** Additive increase on task_success (task_partial gets half). */
    alpha: z.number().min(0).max(1).default(0.01),
    /** Multiplicative decrease (policy_violation and attestation_invalid use beta²). */
    beta: z.number().min(0).max(1).default(0.8),
    /** Score of a peer never seen before (spec: 0.5; zero-trust deployments 0.1). */
    initial_score: Unit.default(0.5),
    /** Score a quarantined peer is reset to on expiry or lift (spec: 0.5). */
    recovery_score: Unit.default(0.5),
    /** Days without interaction before decay starts. */
    idle_days: Positive.default(7),
    /** Score lost per whole idle day beyond idle_days (never below initial_score). */
    decay_per_day: Unit.default(0.01),
    /** At most this much increase per peer per 24 h (spec §Score Inflation); null: no cap. */
    max_increase_per_day: Unit.nullable().default(0.1),
    /** Falling below it emits apae:trust_revoke. */
    revocation_floor: Unit.default(0.2),
    /** Falling below it enters quarantine. */
    quarantine_floor: Unit.default(0.15),
    /** First quarantine's length; each later one doubles it. */
    quarantine_base_hours: Positive.default(1),
    /** Longest quarantine (spec: 168 h = 7 days). */
    quarantine_max_hours: Positive.default(168),
    /** Factor applied to second-hand assertions. */
    attenuation: Unit.default(0.5),
    /** Assertions are accepted only while their hops stay below this (spec default 1). */
    max_hops: z.number().int().min(0).max(16).default(1),
  })
  .superRefine((c, ctx) => {
    if (c.quarantine_floor > c.revocation_floor) {
      ctx.addIssue({
        code: "custom",
        path: ["quarantine_floor"],
        message: "must not exceed revocation_floor",
      });
    }
    if (c.quarantine_max_hours < c.quarantine_base_hours) {
      ctx.addIssue({
        code: "custom",
        path: ["quarantine_max_hours"],
        message: "must be at least quarantine_base_hours",
      });
    }
    if (c.recovery_score < c.quarantine_floor) {
      ctx.addIssue({
        code: "custom",
        path: ["recovery_score"],
        message: "must not be below quarantine_floor",
      });
    }
  });

/** The engine's settings with every default filled in. */
export type TrustConfig = Readonly<z.output<typeof TrustConfigSchema>>;
/** What a deployment may write: any subset of the keys. */
export type TrustConfigInput = z.input<typeof TrustConfigSchema>;

/**
 * Parses overrides over the spec defaults. A document with a top-level `trust` member (a
 * runtime config file) is read from that member. Throws ERR_TRUST_CONFIG_INVALID naming
 * the offending key.
 */
export function parseTrustConfig(input: unknown = {}): TrustConfig {
  const value = isPlainObject(input) && isPlainObject(input.trust) ? input.trust : input;
  const res = TrustConfigSchema.safeParse(value);
  if (res.success) return Object.freeze(res.data);
  const first = res.error.issues[0];
  const path = first === undefined ? "" : first.path.map(String).join(".");
  throw new TrustError(
    "ERR_TRUST_CONFIG_INVALID",
    `trust config invalid at ${path || "(root)"}: ${first?.message ?? "invalid"}`,
  );
}

/** The spec defaults. */
export const DEFAULT_TRUST_CONFIG: TrustConfig = parseTrustConfig({});
