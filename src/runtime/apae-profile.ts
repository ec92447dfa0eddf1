// The assurance profile of a deployment (docs/trust.md, Assurance profiles): the facts the
// profile's requirements are checked against, gathered from the `apae` configuration, the
// loaded policy and the number of approvers. The sidecar refuses to start a Regulated
// deployment with any gap (ERR_TRUST_PROFILE_UNMET) and `--check` lists them.
import type { KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import { parseStrictJson, TrustError } from "../contracts/index.js";
import { keyIdOf, loadPublicKeyFile } from "../crypto/index.js";
import type { GatePolicy } from "../gate/index.js";
import { PolicyBundle } from "../policy/index.js";
import type { CompiledTool } from "../tools/index.js";
import {
  type AssuranceProfile,
  type BehaviorSpec,
  type ContractFacts,
  checkProfile,
  contractGaps,
  type DeploymentFacts,
  type ProfileGap,
  verifyBehaviorSpec,
} from "../trust/index.js";
import type { RuntimeApaeConfig } from "./apae.js";

function policyFacts(policy: GatePolicy): { thresholdRules: boolean; hitlRules: boolean } {
  const rules = policy instanceof PolicyBundle ? (policy.yaml?.rules ?? []) : [];
  return {
    thresholdRules: rules.some(
      (r) => r.decision === "deny" && r.conditions.some((c) => c.name === "apae.threshold"),
    ),
    hitlRules: rules.some((r) => r.decision === "step_up"),
  };
}

/** The configured behaviour specs, each verified against the configured keys (throws on a bad one). */
export function behaviorFacts(config: RuntimeApaeConfig): {
  specs: number;
  continuous: boolean;
  /** The verified specifications (what contract gaps read: require_checkpoint_before). */
  verified: BehaviorSpec[];
} {
  const keys = new Map<string, KeyObject>();
  for (const file of config.behavior?.keys ?? []) {
    const key = loadPublicKeyFile(file);
    keys.set(keyIdOf(key), key);
  }
  let continuous = true;
  const files = config.behavior?.specs ?? [];
  const verified: BehaviorSpec[] = [];
  for (const file of files) {
    const v = verifyBehaviorSpec(parseStrictJson(readFileSync(file, "utf8")), keys);
    if (!v.ok) throw new TrustError(v.code, `${file}: ${v.message}`);
    continuous &&= v.spec.verification_frequency === "continuous";
    verified.push(v.spec);
  }
  return { specs: files.length, continuous: files.length > 0 && continuous, verified };
}

/** The profile's contract requirements (provenance claims, checkpoints) against loaded contracts. */
export function contractProfileGaps(
  profile: AssuranceProfile,
  contracts: Parameters<typeof contractFacts>[0],
  specs: readonly BehaviorSpec[],
): ProfileGap[] {
  return contractGaps(profile, contractFacts(contracts, specs));
}

/** What the deployment configures, as the profile's requirements see it. */
export function deploymentFacts(
  config: RuntimeApaeConfig,
  policy: GatePolicy,
  approvers: number,
  behavior: { specs: number; continuous: boolean },
): DeploymentFacts {
  const floor = (config.settings as { quarantine_floor?: number } | undefined)?.quarantine_floor ?? 0.15;
  return {
    ectSigning: config.ect !== undefined,
    ...policyFacts(policy),
    behaviorSpecs: behavior.specs,
    behaviorContinuous: behavior.continuous,
    approvers,
    quarantine: floor > 0,
    crossDomainPeers: (config.peers ?? []).length > 0 && config.domain !== undefined,
    agreements: (config.agreements ?? []).length,
  };
}

/** The profile's gaps for this deployment. */
export function profileGaps(
  profile: AssuranceProfile,
  config: RuntimeApaeConfig,
  policy: GatePolicy,
  approvers: number,
  behavior: { specs: number; continuous: boolean },
): ProfileGap[] {
  return checkProfile(profile, deploymentFacts(config, policy, approvers, behavior));
}

/** Throws ERR_TRUST_PROFILE_UNMET naming every gap of a Regulated deployment. */
export function refuseUnmetProfile(profile: AssuranceProfile, gaps: readonly ProfileGap[]): void {
  if (profile !== "regulated" || gaps.length === 0) return;
  throw new TrustError(
    "ERR_TRUST_PROFILE_UNMET",
    `the regulated assurance profile requires: ${gaps.map((g) => `${g.mechanism} (${g.message})`).join("; ")}`,
  );
}

const CONSEQUENTIAL_TIERS: ReadonlySet<string> = new Set(["high", "critical"]);
const CONSEQUENTIAL_CATEGORIES: ReadonlySet<string> = new Set(["irreversible_write", "financial"]);

/** A consequential tool: risk tier high or critical, or an irreversible or financial category. */
export function consequential(tool: CompiledTool): boolean {
  const t = tool.contract.tool;
  return (
    CONSEQUENTIAL_TIERS.has(t.risk_tier) ||
    (t.category !== undefined && CONSEQUENTIAL_CATEGORIES.has(t.category))
  );
}

/**
 * What the loaded contracts declare, as the profile sees it: contracts without `[apae]`
 * provenance claims, and consequential tools not guarded by a checkpoint (no installed
 * behaviour spec requires one before them, or no tool is a checkpoint).
 */
export function contractFacts(
  contracts: { names(): string[]; get(name: string): CompiledTool | undefined } | undefined,
  specs: readonly BehaviorSpec[],
): ContractFacts {
  const tools = (contracts?.names() ?? [])
    .map((n) => contracts?.get(n))
    .filter((t): t is CompiledTool => t !== undefined);
  const checkpointTools = tools.filter((t) => t.contract.apae?.checkpoint === true).length;
  const guarded = new Set(specs.flatMap((s) => s.constraints.require_checkpoint_before ?? []));
  return {
    withoutProvenance: tools.filter((t) => t.contract.apae === undefined).map((t) => t.name),
    unguarded: tools
      .filter((t) => consequential(t) && (checkpointTools === 0 || !guarded.has(t.name)))
      .map((t) => t.name),
    checkpointTools,
  };
}
