// The YAML policy format: a strict superset of Ari Kernel's (id, name, priority, match,
// decision, reason, tags), so an Ari policy file loads unchanged. Parsed safely (core
// schema only, no custom tags, bounded aliases and size, duplicate keys rejected) and
// validated by strict zod schemas: an unknown key is an error that names its path.
import { parseDocument } from "yaml";
import { z } from "zod";
import { PolicyError, TaintSource } from "../contracts/index.js";
import { ApaeMatch } from "./apae-match.js";
import { MessageMatch } from "./message-match.js";
import { COUNTER_NAMES } from "./types.js";

export const MAX_POLICY_FILE_BYTES = 1_048_576;
export const MAX_RULES_PER_FILE = 10_000;
const MAX_ALIASES = 100;
const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);

const Name = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_][A-Za-z0-9_.:/-]*$/, "letters, digits and _ . : / - only");
const NameOrList = z.union([Name, z.array(Name).min(1).max(1024)]);
const Scalar = z.union([z.string().max(4096), z.number(), z.boolean()]);

/** Durations: milliseconds as a number, or "500ms", "30s", "5m", "1h". At most 7 days. */
const Duration = z
  .union([
    z.number().int().positive(),
    z.string().regex(/^\d{1,9}(ms|s|m|h)$/, 'a duration like "30s" or "5m"'),
  ])
  .transform((v, ctx) => {
    const ms = typeof v === "number" ? v : parseDuration(v);
    if (ms <= 0 || ms > 7 * 24 * 3_600_000) {
      ctx.addIssue({ code: "custom", message: "duration must be between 1 ms and 7 days" });
      return z.NEVER;
    }
    return ms;
  });

function parseDuration(s: string): number {
  const m = /^(\d+)(ms|s|m|h)$/.exec(s)!;
  const n = Number(m[1]);
  const unit = m[2] as "ms" | "s" | "m" | "h";
  return n * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit];
}

const NumCompare = z
  .strictObject({
    eq: z.number().optional(),
    gt: z.number().optional(),
    gte: z.number().optional(),
    lt: z.number().optional(),
    lte: z.number().optional(),
  })
  .refine((o) => Object.keys(o).length > 0, "at least one of eq, gt, gte, lt, lte");
export type NumCompare = z.infer<typeof NumCompare>;

const ParamCondition = z
  .strictObject({
    /** Ari: regex the scalar value must match (checked for safety, length-capped). */
    pattern: z.string().max(512).optional(),
    /** Ari: the value (as a string) must be one of these. */
    in: z.array(Scalar).max(10_000).optional(),
    /** Ari: the value (as a string) must not be one of these. */
    notIn: z.array(Scalar).max(10_000).optional(),
    gt: z.number().optional(),
    gte: z.number().optional(),
    lt: z.number().optional(),
    lte: z.number().optional(),
    /** true: the parameter must be present; false: it must be absent. */
    exists: z.boolean().optional(),
  })
  .refine((o) => Object.keys(o).length > 0, "an empty parameter condition");
export type ParamCondition = z.infer<typeof ParamCondition>;

const SafeKey = z
  .string()
  .min(1)
  .max(256)
  .refine((k) => !FORBIDDEN_KEYS.has(k), "__proto__, constructor and prototype are not allowed");

const counterShape = Object.fromEntries(COUNTER_NAMES.map((c) => [c, NumCompare.optional()])) as Record<
  (typeof COUNTER_NAMES)[number],
  z.ZodOptional<typeof NumCompare>
>;

export const PolicyMatch = z.strictObject({
  // Ari Kernel's fields
  toolClass: NameOrList.optional(),
  action: NameOrList.optional(),
  principalId: NameOrList.optional(),
  taintSources: z.array(TaintSource).min(1).optional(),
  parameters: z.record(SafeKey, ParamCondition).optional(),
  // Warden's extensions
  tool: NameOrList.optional(),
  /** Any of these roles (roles come from configuration, never from the request). */
  roles: NameOrList.optional(),
  /** Match only when none of these taint sources is present. */
  notTaintSources: z.array(TaintSource).min(1).optional(),
  riskTier: NameOrList.optional(),
  category: NameOrList.optional(),
  humanApproval: z.boolean().optional(),
  /** The highest data classification seen in the session is at least this level. */
  classificationAtLeast: Name.optional(),
  /** Any of these classifications was seen in the session. */
  classificationsSeen: z.array(Name).min(1).optional(),
  counters: z.strictObject(counterShape).optional(),
  /** Calls so far by tool name or `toolClass:action`. */
  perToolCalls: z.record(SafeKey, NumCompare).optional(),
  trustScoreBelow: z.number().min(0).max(1).optional(),
  /** The Gate's risk score of the action (0..1); a call without one counts as 1. */
  risk: NumCompare.optional(),
  /** Per-action semantic drift (0..1); matches only a call whose drift was scored. */
  drift: NumCompare.optional(),
  /** Cumulative semantic drift of the run (0..1); matches only a scored call. */
  cumulativeDrift: NumCompare.optional(),
  trustScoreAtLeast: z.number().min(0).max(1).optional(),
  quarantined: z.boolean().optional(),
  /** true: the call came with a valid capability token; false: it came without one. */
  capability: z.boolean().optional(),

  /** An inter-agent message (src/messaging): from, to, primitive, payloadType, depth. */
  message: MessageMatch.optional(),
  /**
   * Where the values that direct the call came from (src/gate/flow.ts,
   * docs/threat-model.md#flow-control). Every field given must hold. `copied`: some target,
   * or an address in any argument, was copied from tool output and not from the user's
   * request (with `sources`: from output carrying one of them). `named`: some argument's
   * whole value occurs in output carrying one of `sources` (any output without it) and not
   * in the request. `fromRequest`: every target's value is (true) / is not (false) in the request.
   * `untargeted`: no target carries a value. `designated`: every copied value occurs in the
   * output of a call the user's request designated (true when nothing was copied). `foundIn`:
   * some target's value occurs in output carrying one of these sources, vouched for or not.
   * `webRequested`: the request holds a URL or host, or asks for links, URLs, sites or pages.
   * `unsourced`: some target has no source the run can name (not the request, not a record,
   * not a designated document: the model wrote it from a context holding tool output).
   * `dictatedNumber`: a numeric argument that is not a target (an amount) is a number an
   * output's prose wrote out and neither the request nor a designated document holds.
   * `sensitive`: some argument holds a value of a secret class (a payment card number) that
   * the request does not. `runTaintSources`: the run has seen any of
   * these taint sources. A call the Gate computed
   * no flow for does not evaluate (the rule denies).
   */
  flow: z
    .strictObject({
      copied: z.boolean().optional(),
      named: z.boolean().optional(),
      sources: z.array(TaintSource).min(1).optional(),
      fromRequest: z.boolean().optional(),
      untargeted: z.boolean().optional(),
      designated: z.boolean().optional(),
      foundIn: z.array(TaintSource).min(1).optional(),
      webRequested: z.boolean().optional(),
      unsourced: z.boolean().optional(),
      dictatedNumber: z.boolean().optional(),
      sensitive: z.boolean().optional(),
      runTaintSources: z.array(TaintSource).min(1).optional(),
    })
    .refine((o) => Object.keys(o).length > 0, "an empty flow condition")
    .optional(),
  /**
   * The caller's verified AgentPin identity (request.identity): `present` false matches a
   * call without one; the other fields need one and match any of the listed values
   * (`capabilities`: the credential holds any of these capability strings).
   */
  identity: z
    .strictObject({
      present: z.boolean().optional(),
      agentId: z
        .union([z.string().min(1).max(512), z.array(z.string().min(1).max(512)).min(1).max(1000)])
        .optional(),
      domain: z
        .union([z.string().min(1).max(253), z.array(z.string().min(1).max(253)).min(1).max(1000)])
        .optional(),
      capabilities: z.array(z.string().min(1).max(512)).min(1).max(1000).optional(),
    })
    .refine((o) => Object.keys(o).length > 0, "an empty identity condition")
    .optional(),
  /** APAE trust thresholds (apae-match.ts). */
  apae: ApaeMatch.optional(),
});
export type PolicyMatch = z.infer<typeof PolicyMatch>;

const ModifyPath = z
  .string()
  .min(1)
  .max(256)
  .refine(
    (p) =>
      p.split(".").length <= 8 &&
      p.split(".").every((s) => /^[A-Za-z0-9_-]+$/.test(s) && !FORBIDDEN_KEYS.has(s)),
    "a dot path of at most 8 segments of letters, digits, _ and -, none of __proto__/constructor/prototype",
  );

export const ModifyPayload = z
  .strictObject({
    set: z.record(ModifyPath, z.json()).optional(),
    redact: z.array(ModifyPath).min(1).optional(),
    clamp: z
      .record(
        ModifyPath,
        z
          .strictObject({
            min: z.number().optional(),
            max: z.number().optional(),
            maxLength: z.number().int().nonnegative().optional(),
          })
          .refine((o) => Object.keys(o).length > 0, "at least one of min, max, maxLength"),
      )
      .optional(),
  })
  .refine((o) => Object.keys(o).length > 0, "at least one of set, redact, clamp");

const Obligation = z.strictObject({
  type: Name,
  params: z.record(SafeKey, z.json()).optional(),
});

export const RULE_DECISIONS = ["allow", "deny", "require-approval", "step_up", "defer", "modify"] as const;

export const PolicyRule = z
  .strictObject({
    id: Name,
    name: z.string().min(1).max(256),
    description: z.string().max(4096).optional(),
    priority: z.number().int().min(0).max(999),
    match: PolicyMatch,
    decision: z.enum(RULE_DECISIONS),
    reason: z.string().min(1).max(1024),
    /** Stable machine-readable reason; defaults to `RULE:<id>`. */
    reasonCode: z
      .string()
      .regex(/^[A-Z][A-Z0-9_]{0,63}$/)
      .optional(),
    tags: z.array(z.string().max(64)).max(64).optional(),
    stepUp: z.strictObject({ approverRole: Name.optional(), timeout: Duration.optional() }).optional(),
    defer: z.strictObject({ timeout: Duration.optional() }).optional(),
    modify: ModifyPayload.optional(),
    obligations: z.array(Obligation).max(16).optional(),
  })
  .superRefine((r, ctx) => {
    const isStepUp = r.decision === "step_up" || r.decision === "require-approval";
    if (r.stepUp !== undefined && !isStepUp) {
      ctx.addIssue({
        code: "custom",
        path: ["stepUp"],
        message: "stepUp is only allowed with decision step_up",
      });
    }
    if (r.defer !== undefined && r.decision !== "defer") {
      ctx.addIssue({ code: "custom", path: ["defer"], message: "defer is only allowed with decision defer" });
    }
    if ((r.modify !== undefined) !== (r.decision === "modify")) {
      ctx.addIssue({
        code: "custom",
        path: ["modify"],
        message: "decision modify requires a modify payload (and only it)",
      });
    }
  });
export type PolicyRule = z.infer<typeof PolicyRule>;

export const PolicyFile = z.strictObject({
  name: z.string().min(1).max(256).optional(),
  version: z.union([z.string().max(64), z.number()]).optional(),
  description: z.string().max(4096).optional(),
  rules: z.array(PolicyRule).max(MAX_RULES_PER_FILE),
});
export type PolicyFile = z.infer<typeof PolicyFile>;

/** Parses YAML policy text into a validated PolicyFile. Throws a coded PolicyError. */
export function parsePolicyYaml(text: string, sourceName = "policy"): PolicyFile {
  if (Buffer.byteLength(text, "utf8") > MAX_POLICY_FILE_BYTES) {
    throw new PolicyError(
      "ERR_POLICY_TOO_LARGE",
      `${sourceName}: larger than ${MAX_POLICY_FILE_BYTES} bytes`,
    );
  }
  const doc = parseDocument(text, {
    schema: "core",
    customTags: [],
    merge: false,
    uniqueKeys: true,
    prettyErrors: false,
  });
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem !== undefined) {
    throw new PolicyError(
      "ERR_POLICY_YAML_SYNTAX",
      `${sourceName}: ${problem.code}: ${firstLine(problem.message)}`,
      {
        details: { yamlCode: problem.code },
      },
    );
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (err) {
    throw new PolicyError("ERR_POLICY_YAML_SYNTAX", `${sourceName}: ${firstLine((err as Error).message)}`);
  }
  const forbidden = findForbiddenKey(data, "");
  if (forbidden !== undefined) {
    throw new PolicyError("ERR_POLICY_SCHEMA", `${sourceName}: forbidden key at ${forbidden}`, {
      details: { path: forbidden },
    });
  }
  return validatePolicyData(data, sourceName);
}

/** Validates already-parsed policy data (e.g. from JSON) against the strict schema. */
export function validatePolicyData(data: unknown, sourceName = "policy"): PolicyFile {
  const parsed = PolicyFile.safeParse(data);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 5).map((iss) => {
      const path = formatPath(iss.path);
      return `${path || "(root)"}: ${iss.message}`;
    });
    const first = parsed.error.issues[0];
    throw new PolicyError("ERR_POLICY_SCHEMA", `${sourceName}: ${issues.join("; ")}`, {
      details: { path: first === undefined ? "" : formatPath(first.path) },
    });
  }
  return parsed.data;
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const p of path) out += typeof p === "number" ? `[${p}]` : out === "" ? String(p) : `.${String(p)}`;
  return out;
}

function findForbiddenKey(v: unknown, path: string): string | undefined {
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const f = findForbiddenKey(v[i], `${path}[${i}]`);
      if (f !== undefined) return f;
    }
  } else if (v !== null && typeof v === "object") {
    for (const k of Object.keys(v)) {
      const p = path === "" ? k : `${path}.${k}`;
      if (k === "__proto__") return p;
      const f = findForbiddenKey((v as Record<string, unknown>)[k], p);
      if (f !== undefined) return f;
    }
  }
  return undefined;
}

function firstLine(s: string): string {
  return s.split("\n")[0] ?? s;
}
