// `warden policy validate|explain`: check policy files before deploying them, and show
// which rules a request meets and why, without running anything.
import type { Command } from "commander";
import { z } from "zod";
import { CliError, GateRequest, TaintLabel, WardenError } from "../../contracts/index.js";
import {
  COUNTER_NAMES,
  loadPolicyBundle,
  type PolicyExplanation,
  type PolicyInput,
  type PolicySessionFacts,
} from "../../policy/index.js";
import { type CliContext, EXIT, readJsonFile } from "../io.js";
import { addOptions, defineOptions, type OptionsOf } from "../options.js";
import { SUMMARY } from "./summaries.js";

const Name = z.string().min(1).max(128);
const Counters = z.strictObject(
  Object.fromEntries(COUNTER_NAMES.map((c) => [c, z.number().int().min(0).optional()])),
);

const Strings = z.array(z.string().max(1024)).max(1024);
const Capability = z.strictObject({
  toolClass: Name,
  actions: z.array(Name).max(256).optional(),
  constraints: z
    .strictObject({
      allowedPaths: Strings.optional(),
      allowedHosts: Strings.optional(),
      allowedCommands: Strings.optional(),
      allowedDatabases: Strings.optional(),
      maxCallsPerMinute: z.number().int().positive().optional(),
    })
    .optional(),
});

/** The --request file: a bare GateRequest, or a request with the facts the Gate would add. */
const ExplainInput = z.strictObject({
  request: z.unknown(),
  principal: z
    .strictObject({
      id: Name.optional(),
      roles: z.array(Name).max(256).optional(),
      capabilities: z.array(Capability).max(256).optional(),
    })
    .optional(),
  tool: z
    .strictObject({
      name: Name,
      version: z.string().max(64).optional(),
      riskTier: Name.optional(),
      category: Name.optional(),
      humanApproval: z.boolean().optional(),
      cedarResource: Name.optional(),
      cedarAction: Name.optional(),
    })
    .optional(),
  taint: z.array(TaintLabel).max(1024).optional(),
  session: z
    .strictObject({
      runId: z.string().max(128).optional(),
      counters: Counters.optional(),
      perToolCalls: z.record(z.string().max(256), z.number().int().min(0)).optional(),
      dataClassificationsSeen: z.array(Name).max(64).optional(),
      highestClassification: Name.optional(),
      quarantined: z.boolean().optional(),
    })
    .optional(),
  trustScore: z.number().min(0).max(1).optional(),
});

function inputError(file: string, err: z.ZodError): CliError {
  const iss = err.issues[0];
  return new CliError(
    "ERR_CLI_INPUT",
    `${file}: ${iss === undefined ? "invalid" : `${iss.path.join(".") || "(root)"}: ${iss.message}`}`,
  );
}

/** Reads a --request file into a PolicyInput. Exported for `warden gate`-style tooling and tests. */
export function readPolicyInput(file: string, roles: readonly string[] = []): PolicyInput {
  const raw = readJsonFile(file);
  const wrapped = raw !== null && typeof raw === "object" && !Array.isArray(raw) && "request" in raw;
  const outer = ExplainInput.safeParse(wrapped ? raw : { request: raw });
  if (!outer.success) throw inputError(file, outer.error);
  const req = GateRequest.safeParse(outer.data.request);
  if (!req.success) throw inputError(file, req.error);
  const o = outer.data;
  const request = req.data;
  const counters = { proposed: 0, allowed: 0, denied: 0, deferred: 0, executed: 0, stepUps: 0, modified: 0 };
  Object.assign(counters, o.session?.counters ?? {});
  const session: PolicySessionFacts = {
    runId: o.session?.runId ?? request.runId,
    counters,
    perToolCalls: o.session?.perToolCalls ?? {},
    dataClassificationsSeen: o.session?.dataClassificationsSeen ?? [],
    quarantined: o.session?.quarantined ?? false,
  };
  if (o.session?.highestClassification !== undefined)
    session.highestClassification = o.session.highestClassification;
  const input: PolicyInput = {
    request,
    principal: {
      id: o.principal?.id ?? request.principalId,
      roles: [...(o.principal?.roles ?? []), ...roles],
      ...(o.principal?.capabilities !== undefined
        ? {
            capabilities: o.principal.capabilities as unknown as NonNullable<
              PolicyInput["principal"]["capabilities"]
            >,
          }
        : {}),
    },
    taint: o.taint ?? request.taintLabels,
    session,
  };
  if (o.tool !== undefined) {
    const t: NonNullable<PolicyInput["tool"]> = { name: o.tool.name };
    for (const k of [
      "version",
      "riskTier",
      "category",
      "humanApproval",
      "cedarResource",
      "cedarAction",
    ] as const) {
      if (o.tool[k] !== undefined) (t as unknown as Record<string, unknown>)[k] = o.tool[k];
    }
    input.tool = t;
  }
  if (o.trustScore !== undefined) input.trustScore = o.trustScore;
  return input;
}

const CEDAR_ACTION = {
  flags: "--cedar-action <action>",
  description: "extra Cedar action to declare in the schema (repeatable)",
  kind: "repeat",
} as const;

const VALIDATE_OPTIONS = defineOptions({
  cedarAction: CEDAR_ACTION,
  json: { flags: "--json", description: "print the results as JSON", kind: "flag" },
});

const EXPLAIN_OPTIONS = defineOptions({
  policy: {
    flags: "--policy <file>",
    description: "policy file (repeatable)",
    kind: "repeat",
    required: true,
  },
  request: {
    flags: "--request <file>",
    description: "a GateRequest JSON, or {request, principal?, tool?, taint?, session?, trustScore?}",
    kind: "value",
    required: true,
  },
  role: {
    flags: "--role <role>",
    description: "principal role from configuration (repeatable)",
    kind: "repeat",
  },
  cedarAction: CEDAR_ACTION,
  json: { flags: "--json", description: "print the explanation as JSON", kind: "flag" },
});

function formatExplanation(e: PolicyExplanation): string {
  const o = e.outcome;
  const lines = [
    `decision     ${o.decision}`,
    `reasons      ${o.reasonCodes.join(", ")}`,
    `bundle       ${o.policyBundleHash}`,
  ];
  if (o.stepUp)
    lines.push(`step_up      approver role ${o.stepUp.approverRole}, timeout ${o.stepUp.timeoutMs} ms`);
  if (o.defer) lines.push(`defer        timeout ${o.defer.timeoutMs} ms`);
  if (o.modify) for (const c of o.modify.changes) lines.push(`modify       ${c.op} ${c.path}`);
  for (const ob of o.obligations) lines.push(`obligation   ${ob.type}`);
  if (e.capability)
    lines.push(`capability   ${e.capability.denied ? `denied: ${e.capability.reason}` : "granted"}`);
  if (e.yaml.length > 0) lines.push("yaml rules (evaluation order, first match wins):");
  for (const r of e.yaml) {
    const why = r.matched
      ? r.undetermined
        ? "MATCH (over-long value, fails toward deny)"
        : "MATCH"
      : `no: ${r.failed}`;
    lines.push(`  ${String(r.priority).padStart(3)} ${r.id} [${r.decision}] ${why}`);
  }
  if (e.cedar.length > 0) lines.push("cedar policies:");
  for (const c of e.cedar) {
    lines.push(
      `  ${c.id} ${c.effect} [${c.decision}] ${c.satisfied ? "SATISFIED" : c.errored ? "ERRORED" : "not satisfied"}`,
    );
  }
  lines.push("matched:");
  for (const m of o.matchedRules)
    lines.push(`  ${m.source}:${m.id} → ${m.decision}${m.reason ? ` (${m.reason})` : ""}`);
  return `${lines.join("\n")}\n`;
}

export function registerPolicy(program: Command, ctx: CliContext): void {
  const policy = program.command("policy").description(SUMMARY.policy);
  addOptions(
    policy
      .command("validate")
      .description("load each policy file (.yaml/.yml/.json rules, .cedar) and report errors with codes")
      .argument("<files...>", "policy files"),
    VALIDATE_OPTIONS,
  ).action((files: string[], opts: OptionsOf<typeof VALIDATE_OPTIONS>) => {
    const results = files.map((file) => {
      try {
        const b = loadPolicyBundle([file], { cedarActions: opts.cedarAction });
        return {
          file,
          ok: true as const,
          rules: b.summary.sources[0]?.rules ?? 0,
          policyBundleHash: b.policyBundleHash,
        };
      } catch (err) {
        if (!(err instanceof WardenError)) throw err;
        return { file, ok: false as const, code: err.code, message: err.message };
      }
    });
    if (results.some((r) => !r.ok)) ctx.exitCode = EXIT.failed;
    if (opts.json) {
      ctx.io.out(`${JSON.stringify(results, null, 2)}\n`);
      return;
    }
    for (const r of results) {
      ctx.io.out(
        r.ok
          ? `ok    ${r.file} (${r.rules} rules) ${r.policyBundleHash}\n`
          : `FAIL  ${r.file} ${r.code}: ${r.message}\n`,
      );
    }
  });
  addOptions(
    policy
      .command("explain")
      .description(
        "evaluate a request against policies and show which rules matched and why (exit 0 whatever the decision)",
      ),
    EXPLAIN_OPTIONS,
  ).action((opts: OptionsOf<typeof EXPLAIN_OPTIONS>) => {
    if (opts.policy.length === 0) throw new CliError("ERR_CLI_USAGE", "at least one --policy is required");
    const bundle = loadPolicyBundle(opts.policy, { cedarActions: opts.cedarAction });
    const input = readPolicyInput(opts.request, opts.role);
    const e = bundle.explain(input);
    ctx.io.out(opts.json ? `${JSON.stringify(e, null, 2)}\n` : formatExplanation(e));
  });
}
