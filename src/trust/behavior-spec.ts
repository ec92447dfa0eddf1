// Behaviour specifications (APAE §Behavior Verification): what an agent is permitted to do,
// as a signed, versioned JSON document. Signed with an operator's Ed25519 key over the
// RFC 8785 canonical JSON of the spec (like quarantine lifts); only configured keys count.
// A spec change is recorded as an `apae:behavior_spec` ECT naming the version and the
// spec's hash, so the ECT stream shows which spec was in force when.
import type { KeyObject } from "node:crypto";
import { z } from "zod";
import { canonicalJson, sha256Hex } from "../contracts/index.js";
import { keyIdOf, keyTypeOf, signCanonical, verifyCanonical } from "../crypto/index.js";
import type { EctInput } from "./ect.js";

export const CHECKPOINT_ACT = "atd:checkpoint";
export const BEHAVIOR_SPEC_ACT = "apae:behavior_spec";

const Name = z.string().min(1).max(256);
/** A target glob: `*` any run of characters, `?` one character; everything else literal. */
const Glob = z.string().min(1).max(512);

export const BehaviorSpecSchema = z.strictObject({
  spec_version: z.string().min(1).max(64),
  agent_id: z.string().min(1).max(1024),
  allowed_actions: z.array(Name).max(1024),
  constraints: z
    .strictObject({
      max_actions_per_minute: z.number().int().min(1).max(1_000_000).optional(),
      forbidden_targets: z.array(Glob).max(1024).optional(),
      require_checkpoint_before: z.array(Name).max(1024).optional(),
      /** How recent a checkpoint must be (default 10 s, the spec's example). */
      checkpoint_max_age_seconds: z.number().int().min(1).max(86_400).optional(),
    })
    .default({}),
  verification_frequency: z.enum(["continuous", "periodic"]).default("continuous"),
});
export type BehaviorSpec = z.output<typeof BehaviorSpecSchema>;

export const SignedBehaviorSpecSchema = z.strictObject({
  spec: BehaviorSpecSchema,
  key_id: z.string().min(1).max(256),
  signature: z.string().min(1).max(512),
});
export type SignedBehaviorSpec = z.infer<typeof SignedBehaviorSpecSchema>;

export type SpecOutcome =
  | { ok: true; spec: BehaviorSpec; hash: string }
  | { ok: false; code: "ERR_TRUST_SPEC_INVALID" | "ERR_TRUST_SPEC_SIGNATURE_INVALID"; message: string };

/** Signs a spec with an operator's Ed25519 key (the operator's tool; tests). */
export function signBehaviorSpec(
  spec: z.input<typeof BehaviorSpecSchema>,
  signer: { privateKey: KeyObject; publicKey: KeyObject },
): SignedBehaviorSpec {
  const parsed = BehaviorSpecSchema.parse(spec);
  return {
    spec: parsed,
    key_id: keyIdOf(signer.publicKey),
    signature: signCanonical(signer.privateKey, parsed),
  };
}

/** Checks a signed spec against the configured keys (key id → Ed25519 public key). */
export function verifyBehaviorSpec(input: unknown, keys: ReadonlyMap<string, KeyObject>): SpecOutcome {
  const parsed = SignedBehaviorSpecSchema.safeParse(input);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    return {
      ok: false,
      code: "ERR_TRUST_SPEC_INVALID",
      message: `behaviour spec invalid at ${i?.path.join(".") ?? ""}`,
    };
  }
  const { spec, key_id, signature } = parsed.data;
  const key = keys.get(key_id);
  if (
    key === undefined ||
    keyTypeOf(key) !== "ed25519" ||
    keyIdOf(key) !== key_id ||
    !verifyCanonical(key, spec, signature)
  ) {
    return {
      ok: false,
      code: "ERR_TRUST_SPEC_SIGNATURE_INVALID",
      message: "the spec is not signed by a configured key",
    };
  }
  return { ok: true, spec, hash: `sha256:${sha256Hex(canonicalJson(spec))}` };
}

/** The ECT recording that `spec` (hash `hash`) is now in force for its agent. */
export function specChangeInput(
  spec: BehaviorSpec,
  hash: string,
  aud: string | string[],
  previous?: string,
): EctInput {
  return {
    exec_act: BEHAVIOR_SPEC_ACT,
    aud,
    par: previous === undefined ? [] : [previous],
    ext: { "apae.agent_id": spec.agent_id, "apae.spec_version": spec.spec_version, "apae.spec_hash": hash },
  };
}

/**
 * Whether `value` matches a target glob (`*` any run, `?` one character). The classic
 * two-pointer wildcard match: linear in practice, O(n·m) at worst, never a regex.
 */
export function globMatch(glob: string, value: string): boolean {
  let g = 0;
  let v = 0;
  let star = -1;
  let mark = 0;
  while (v < value.length) {
    if (g < glob.length && (glob[g] === "?" || (glob[g] !== "*" && glob[g] === value[v]))) {
      g++;
      v++;
    } else if (g < glob.length && glob[g] === "*") {
      star = g++;
      mark = v;
    } else if (star !== -1) {
      g = star + 1;
      v = ++mark;
    } else {
      return false;
    }
  }
  while (g < glob.length && glob[g] === "*") g++;
  return g === glob.length;
}
