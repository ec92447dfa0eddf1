// Assurance profiles (APAE §Assurance Profiles): Relaxed / Standard / Regulated select
// which mechanisms are required, exactly per the spec's table. One profile per deployment,
// overridable per workflow or tool — only towards a stricter profile (an override can never
// weaken what the deployment promises). `checkProfile` says which required mechanisms a
// deployment lacks; a Regulated deployment with any missing refuses to start.
import { z } from "zod";
import type { EctLevel } from "./ect.js";

export const PROFILES = ["relaxed", "standard", "regulated"] as const;
export type AssuranceProfile = (typeof PROFILES)[number];
export const ProfileSchema = z.enum(PROFILES);

export interface ProfileMechanisms {
  ect_level: EctLevel;
  trust_scoring: "optional" | "recommended" | "required";
  trust_thresholds: "optional" | "recommended" | "required";
  behavior_verification: "off" | "periodic" | "continuous";
  hitl_gates: "optional" | "critical_paths" | "mandatory";
  provenance_claims: "off" | "optional" | "required";
  checkpoint_before_consequential: "recommended" | "required";
  audit_ledger: "optional" | "required";
  quarantine: "optional" | "recommended" | "required";
  cross_domain_agreements: "optional" | "required_if_cross_domain";
}

/** The spec's table (fig-profiles), row by row. */
export const PROFILE_MECHANISMS: Readonly<Record<AssuranceProfile, Readonly<ProfileMechanisms>>> = {
  relaxed: {
    ect_level: "L1",
    trust_scoring: "optional",
    trust_thresholds: "optional",
    behavior_verification: "off",
    hitl_gates: "optional",
    provenance_claims: "off",
    checkpoint_before_consequential: "recommended",
    audit_ledger: "optional",
    quarantine: "optional",
    cross_domain_agreements: "optional",
  },
  standard: {
    ect_level: "L2",
    trust_scoring: "recommended",
    trust_thresholds: "recommended",
    behavior_verification: "periodic",
    hitl_gates: "critical_paths",
    provenance_claims: "optional",
    checkpoint_before_consequential: "required",
    audit_ledger: "optional",
    quarantine: "recommended",
    cross_domain_agreements: "required_if_cross_domain",
  },
  regulated: {
    ect_level: "L3",
    trust_scoring: "required",
    trust_thresholds: "required",
    behavior_verification: "continuous",
    hitl_gates: "mandatory",
    provenance_claims: "required",
    checkpoint_before_consequential: "required",
    audit_ledger: "required",
    quarantine: "required",
    cross_domain_agreements: "required_if_cross_domain",
  },
};

const rank = (p: AssuranceProfile) => PROFILES.indexOf(p);

/** The profile in force for a workflow / tool: the strictest of the deployment's and any override. */
export function profileFor(
  base: AssuranceProfile,
  overrides: { workflows?: Record<string, AssuranceProfile>; tools?: Record<string, AssuranceProfile> },
  at: { workflow?: string; tool?: string },
): AssuranceProfile {
  let p = base;
  const w = at.workflow === undefined ? undefined : overrides.workflows?.[at.workflow];
  const t = at.tool === undefined ? undefined : overrides.tools?.[at.tool];
  for (const o of [w, t]) if (o !== undefined && rank(o) > rank(p)) p = o;
  return p;
}

/** Overrides weaker than the deployment's profile: refused at configuration. */
export function weakerOverrides(
  base: AssuranceProfile,
  overrides: { workflows?: Record<string, AssuranceProfile>; tools?: Record<string, AssuranceProfile> },
): string[] {
  const out: string[] = [];
  for (const [kind, map] of [
    ["workflows", overrides.workflows],
    ["tools", overrides.tools],
  ] as const) {
    for (const [name, p] of Object.entries(map ?? {}))
      if (rank(p) < rank(base)) out.push(`${kind}.${name}: ${p}`);
  }
  return out;
}

/** What a deployment has configured, as far as the profile's requirements go. */
export interface DeploymentFacts {
  /** This deployment signs ECTs (a P-256 key): L2, and L3 with the journal's ledger. */
  ectSigning: boolean;
  /** The policy has a deny rule with an APAE trust threshold. */
  thresholdRules: boolean;
  /** Behaviour specs in force, and whether every one is checked continuously. */
  behaviorSpecs: number;
  behaviorContinuous: boolean;
  /** The policy has a step_up rule and someone can approve. */
  hitlRules: boolean;
  approvers: number;
  /** The quarantine floor is above zero (an agent can be quarantined). */
  quarantine: boolean;
  /** Peers in other domains are configured, and agreements exist. */
  crossDomainPeers: boolean;
  agreements: number;
  /** The loaded contracts as the profile sees them (absent: not known to the caller, not checked). */
  contracts?: ContractFacts;
}

/** What the loaded tool contracts declare for provenance and checkpoints. */
export interface ContractFacts {
  /** Contracts without `[apae]` provenance claims (data_source, classification, retention, transformations). */
  withoutProvenance: string[];
  /** Consequential tools (risk tier high/critical, irreversible or financial) no spec checkpoints before. */
  unguarded: string[];
  /** Tools whose actions are checkpoints (`[apae] checkpoint = true`). */
  checkpointTools: number;
}

/** The contract-level gaps of `profile`: provenance claims and checkpoints before consequential actions. */
export function contractGaps(profile: AssuranceProfile, c: ContractFacts): ProfileGap[] {
  const m = PROFILE_MECHANISMS[profile];
  const gaps: ProfileGap[] = [];
  if (m.provenance_claims === "required" && c.withoutProvenance.length > 0) {
    gaps.push({
      mechanism: "provenance_claims",
      message: `contracts without [apae] provenance claims: ${c.withoutProvenance.join(", ")}`,
    });
  }
  if (m.checkpoint_before_consequential === "required" && c.unguarded.length > 0) {
    gaps.push({
      mechanism: "checkpoint_before_consequential",
      message:
        `consequential tools without a checkpoint before them (a behaviour spec's require_checkpoint_before, ` +
        `and a tool with [apae] checkpoint = true): ${c.unguarded.join(", ")}`,
    });
  }
  return gaps;
}

export interface ProfileGap {
  mechanism: keyof ProfileMechanisms;
  message: string;
}

/** The required mechanisms `facts` lack under `profile` (Regulated refuses to start on any). */
export function checkProfile(profile: AssuranceProfile, facts: DeploymentFacts): ProfileGap[] {
  const m = PROFILE_MECHANISMS[profile];
  const gaps: ProfileGap[] = [];
  const need = (ok: boolean, mechanism: keyof ProfileMechanisms, message: string) => {
    if (!ok) gaps.push({ mechanism, message });
  };
  if (m.ect_level !== "L1")
    need(facts.ectSigning, "ect_level", `${m.ect_level} ECTs need apae.ect (a P-256 signing key)`);
  if (m.audit_ledger === "required")
    need(facts.ectSigning, "audit_ledger", "the L3 audit ledger needs signed ECTs (apae.ect)");
  if (m.trust_thresholds === "required") {
    need(
      facts.thresholdRules,
      "trust_thresholds",
      "no policy rule denies below an apae trust threshold (apae.min_trust / min_confidence)",
    );
  }
  if (m.behavior_verification === "continuous") {
    need(
      facts.behaviorSpecs > 0 && facts.behaviorContinuous,
      "behavior_verification",
      "continuous behaviour verification needs signed specs (apae.behavior) with verification_frequency continuous",
    );
  }
  if (m.hitl_gates === "mandatory") {
    need(
      facts.hitlRules && facts.approvers > 0,
      "hitl_gates",
      "mandatory HITL gates need a step_up rule and at least one approver",
    );
  }
  if (m.quarantine === "required")
    need(facts.quarantine, "quarantine", "the quarantine protocol is off (quarantine_floor is 0)");
  if (facts.contracts !== undefined) gaps.push(...contractGaps(profile, facts.contracts));
  if (m.cross_domain_agreements === "required_if_cross_domain" && facts.crossDomainPeers) {
    need(
      facts.agreements > 0,
      "cross_domain_agreements",
      "cross-domain peers need bilateral agreements (apae.agreements)",
    );
  }
  return gaps;
}
