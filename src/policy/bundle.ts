// A policy bundle: every source (YAML layers, Cedar) compiled once, hashed into one
// `policy_bundle_hash` over canonical content in a fixed order, and evaluated as a
// pure function of the PolicyInput. The Gate journals a bundle's summary when it loads.
import { readFileSync, statSync } from "node:fs";
import { basename, extname } from "node:path";
import { PolicyError, type Sha256Hash, sha256Of } from "../contracts/index.js";
import { checkCapabilities } from "./capabilities.js";
import { CedarEngine, type CedarTraceEntry } from "./cedar.js";
import { type CombinedOutcome, combineOutcomes } from "./combine.js";
import { buildEvalContext, DEFAULT_CLASSIFICATION_LEVELS, type EvalContext } from "./eval-context.js";
import { applyModify } from "./modify.js";
import { MAX_PATTERN_INPUT_LENGTH } from "./regex-safety.js";
import type { PolicyInput, PolicyOutcome, RuleOutcome } from "./types.js";
import {
  type Layer,
  NOT_EVALUABLE_REASON,
  type RuleTrace,
  YamlEngine,
  type YamlSource,
} from "./yaml-engine.js";
import {
  MAX_POLICY_FILE_BYTES,
  type PolicyFile,
  parsePolicyYaml,
  validatePolicyData,
} from "./yaml-schema.js";

export const BUNDLE_FORMAT = "warden.policy-bundle/1";

/** A YAML source: text to parse, or already-parsed data (validated the same way). */
export type YamlInput = { name: string; text: string } | { name: string; data: unknown };

export interface PolicyBundleSources {
  /** Project policies (priorities 0-899). */
  yaml?: YamlInput[];
  /** Runtime overrides (priorities 900-998), evaluated after project rules, before the default deny. */
  overrides?: YamlInput[];
  cedar?: { name: string; text: string }[];
}

export interface PolicyBundleOptions {
  /** Ordered data classification levels, lowest first. */
  classificationLevels?: readonly string[];
  /** Parameter values longer than this are never run through a pattern. */
  maxPatternInputLength?: number;
  /** Extra Cedar actions (e.g. from tool contracts' `[tool.cedar].action`) declared in the schema. */
  cedarActions?: readonly string[];
}

export interface BundleSummary {
  format: typeof BUNDLE_FORMAT;
  policyBundleHash: Sha256Hash;
  sources: { name: string; kind: "yaml" | "cedar"; layer?: Layer; rules: number }[];
}

export interface PolicyExplanation {
  outcome: PolicyOutcome;
  capability?: { checked: true; denied: boolean; reason?: string };
  yaml: RuleTrace[];
  cedar: CedarTraceEntry[];
}

export class PolicyBundle {
  readonly policyBundleHash: Sha256Hash;
  readonly summary: BundleSummary;
  readonly yaml: YamlEngine | undefined;
  readonly cedar: CedarEngine | undefined;
  private readonly levels: readonly string[];

  constructor(sources: PolicyBundleSources, options: PolicyBundleOptions = {}) {
    const levels = options.classificationLevels ?? DEFAULT_CLASSIFICATION_LEVELS;
    if (levels.length === 0 || new Set(levels).size !== levels.length) {
      throw new PolicyError(
        "ERR_POLICY_SCHEMA",
        "classificationLevels must be a non-empty list without repeats",
      );
    }
    this.levels = [...levels];
    const maxLen = options.maxPatternInputLength ?? MAX_PATTERN_INPUT_LENGTH;
    const yamlSources: YamlSource[] = [];
    for (const [layer, list] of [
      ["project", sources.yaml ?? []],
      ["override", sources.overrides ?? []],
    ] as const) {
      for (const y of list) {
        const file: PolicyFile =
          "text" in y ? parsePolicyYaml(y.text, y.name) : validatePolicyData(y.data, y.name);
        yamlSources.push({ name: y.name, layer, file });
      }
    }
    const cedarSources = sources.cedar ?? [];
    if (yamlSources.length === 0 && cedarSources.length === 0) {
      throw new PolicyError(
        "ERR_POLICY_EMPTY_BUNDLE",
        "a policy bundle needs at least one YAML or Cedar source",
      );
    }
    this.yaml =
      yamlSources.length > 0
        ? new YamlEngine(yamlSources, { classificationLevels: this.levels, maxPatternInputLength: maxLen })
        : undefined;
    this.cedar =
      cedarSources.length > 0 ? new CedarEngine(cedarSources, options.cedarActions ?? []) : undefined;

    const content = {
      format: BUNDLE_FORMAT,
      classificationLevels: this.levels,
      maxPatternInputLength: maxLen,
      yaml: yamlSources.map((s) => ({ name: s.name, layer: s.layer, policy: s.file })),
      cedar:
        this.cedar === undefined
          ? null
          : {
              schema: this.cedar.schemaText,
              policies: this.cedar.policyIds.map((id) => ({ id, text: this.cedar!.policies[id] })),
            },
    };
    // canonicalJson rejects undefined members, so round-trip through JSON first (optional keys vanish).
    this.policyBundleHash = sha256Of(JSON.parse(JSON.stringify(content)));
    this.summary = {
      format: BUNDLE_FORMAT,
      policyBundleHash: this.policyBundleHash,
      sources: [
        ...yamlSources.map((s) => ({
          name: s.name,
          kind: "yaml" as const,
          layer: s.layer,
          rules: s.file.rules.length,
        })),
        ...(this.cedar === undefined
          ? []
          : cedarSources.map((c) => ({
              name: c.name,
              kind: "cedar" as const,
              rules: this.cedar!.sourceCounts.get(c.name) ?? 0,
            }))),
      ],
    };
  }

  /** The decision for one call. Pure: same input and bundle, same outcome. */
  evaluate(input: PolicyInput): PolicyOutcome {
    const ctx = buildEvalContext(input, this.levels);
    const outcomes = this.collect(ctx);
    const combined = combineOutcomes(outcomes);
    if (combined.modifySpecs.length === 0) return this.finish(combined, undefined);
    const rewrite = applyModify(input.request.parameters as Record<string, unknown>, combined.modifySpecs);
    if (rewrite.ok) return this.finish(combined, rewrite);
    // A payload that cannot be applied to the values given denies (deny drops every payload).
    return this.finish(combineOutcomes([...outcomes, modifyNotEvaluable(rewrite.path)]), undefined);
  }

  /** The decision plus, per source, which rules were tried and why they did or did not match. */
  explain(input: PolicyInput): PolicyExplanation {
    const ctx = buildEvalContext(input, this.levels);
    const outcome = this.evaluate(input);
    const out: PolicyExplanation = { outcome, yaml: [], cedar: [] };
    if (input.principal.capabilities !== undefined) {
      const cap = checkCapabilities(ctx, input.principal.capabilities);
      out.capability =
        cap === undefined
          ? { checked: true, denied: false }
          : { checked: true, denied: true, reason: cap.rule.reason! };
      if (cap !== undefined) return out;
    }
    if (this.yaml !== undefined) out.yaml = this.yaml.explain(ctx);
    if (this.cedar !== undefined) out.cedar = this.cedar.explain(ctx).trace;
    return out;
  }

  private collect(ctx: EvalContext): RuleOutcome[] {
    const caps = ctx.input.principal.capabilities;
    if (caps !== undefined) {
      const denied = checkCapabilities(ctx, caps);
      if (denied !== undefined) return [denied];
    }
    const outcomes: RuleOutcome[] = [];
    const y = this.yaml?.evaluate(ctx);
    if (y !== undefined) outcomes.push(y);
    if (this.cedar !== undefined) outcomes.push(...this.cedar.evaluate(ctx));
    return outcomes;
  }

  private finish(c: CombinedOutcome, rewrite: PolicyOutcome["modify"]): PolicyOutcome {
    const out: PolicyOutcome = {
      decision: c.decision,
      reasonCodes: c.reasonCodes,
      matchedRules: c.matchedRules.map((r) => ({ ...r })),
      obligations: c.obligations,
      policyBundleHash: this.policyBundleHash,
    };
    if (rewrite !== undefined) out.modify = { parameters: rewrite.parameters, changes: rewrite.changes };
    if (c.stepUp !== undefined) out.stepUp = c.stepUp;
    if (c.defer !== undefined) out.defer = c.defer;
    return out;
  }
}

function modifyNotEvaluable(path: string): RuleOutcome {
  return {
    rule: {
      id: "builtin.modify-not-evaluable",
      source: "builtin",
      decision: "deny",
      reason: `the modify payload cannot be applied to parameter ${path}: its value has a type the payload cannot bound`,
    },
    reasonCode: NOT_EVALUABLE_REASON,
  };
}

/**
 * Loads a bundle from files (`.yaml`/`.yml`/`.json` → project YAML, `.cedar` → Cedar) or
 * from in-memory sources. Throws a coded PolicyError for any invalid source.
 */
export function loadPolicyBundle(
  sources: readonly string[] | PolicyBundleSources,
  options: PolicyBundleOptions = {},
): PolicyBundle {
  if (!Array.isArray(sources)) return new PolicyBundle(sources as PolicyBundleSources, options);
  const s: Required<PolicyBundleSources> = { yaml: [], overrides: [], cedar: [] };
  for (const path of sources as readonly string[]) {
    const ext = extname(path).toLowerCase();
    const name = basename(path);
    const text = readPolicyFile(path);
    if (ext === ".yaml" || ext === ".yml" || ext === ".json") s.yaml.push({ name, text });
    else if (ext === ".cedar") s.cedar.push({ name, text });
    else
      throw new PolicyError(
        "ERR_POLICY_FILE",
        `${name}: unknown policy file type (want .yaml, .yml, .json or .cedar)`,
      );
  }
  return new PolicyBundle(s, options);
}

/** Reads a policy file with a size cap; a missing or unreadable file is ERR_POLICY_FILE. */
export function readPolicyFile(path: string): string {
  let size: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new PolicyError("ERR_POLICY_FILE", `${basename(path)}: not a regular file`);
    size = st.size;
  } catch (err) {
    if (err instanceof PolicyError) throw err;
    throw new PolicyError(
      "ERR_POLICY_FILE",
      `cannot read ${basename(path)}: ${(err as NodeJS.ErrnoException).code ?? "error"}`,
    );
  }
  if (size > MAX_POLICY_FILE_BYTES) {
    throw new PolicyError(
      "ERR_POLICY_TOO_LARGE",
      `${basename(path)}: larger than ${MAX_POLICY_FILE_BYTES} bytes`,
    );
  }
  return readFileSync(path, "utf8");
}
