// `warden gate`: ask the Gate for decisions without executing anything. One request,
// or a session replayed from JSONL — calls and the observed results of earlier calls —
// through one Gate, so scenarios and regressions can be written as files. Exit 0
// whatever the decisions; 1 only for a failed `--check`; 2 for bad input.
import { dirname, resolve } from "node:path";
import type { Command } from "commander";
import { z } from "zod";
import { MemoryPrincipalStateStore } from "../../context/index.js";
import {
  CliError,
  DECISIONS,
  type DecisionId,
  GateError,
  parseStrictJson,
  TaintLabel,
  WardenError,
} from "../../contracts/index.js";
import { generateKeyPair, loadPrivateKeyFile } from "../../crypto/index.js";
import {
  faultOf,
  type Gate,
  type GateOutcome,
  type LoadedGateConfig,
  loadGateConfig,
  parseGateConfig,
} from "../../gate/index.js";
import { composeRuntime, type Runtime } from "../../runtime/index.js";
import { type CliContext, EXIT, readJsonFile, readTextFile } from "../io.js";
import { addOptions, defineOptions, type OptionsOf } from "../options.js";
import { SUMMARY } from "./summaries.js";

const MAX_SESSION_BYTES = 16 * 1024 * 1024;

const Expect = z.union([
  z.enum(DECISIONS),
  z.strictObject({
    decision: z.enum(DECISIONS),
    reasonCodes: z.array(z.string()).optional(),
    matchedRules: z.array(z.string()).optional(),
    taintSources: z.array(z.string()).optional(),
  }),
]);

const Step = z.union([
  z.strictObject({ call: z.unknown(), expect: Expect.optional(), note: z.string().optional() }),
  z.strictObject({
    result: z.strictObject({
      taintLabels: z.array(TaintLabel).max(256).optional(),
      data: z.json().optional(),
      classification: z.string().max(64).optional(),
    }),
    note: z.string().optional(),
  }),
  z.strictObject({
    scenario: z.strictObject({
      description: z.string(),
      policies: z.array(z.string()).max(64).optional(),
      config: z.unknown().optional(),
    }),
  }),
]);
type Step = z.infer<typeof Step>;

export interface DecisionLine {
  step: number;
  decision: GateOutcome["decision"];
  reasonCodes: string[];
  matchedRules: string[];
  decisionId: string | null;
  taintSources: string[];
  parameters?: Record<string, unknown>;
}

function toLine(step: number, o: GateOutcome): DecisionLine {
  const line: DecisionLine = {
    step,
    decision: o.decision,
    reasonCodes: o.reasonCodes,
    matchedRules: o.matchedRules.map((r) => r.id),
    decisionId: o.decisionId,
    taintSources: [...new Set(o.taint.map((t) => t.source))].sort(),
  };
  if (o.changes) line.parameters = o.parameters;
  return line;
}

function parseSession(path: string): Step[] {
  const text = readTextFile(path, MAX_SESSION_BYTES);
  const steps: Step[] = [];
  text.split("\n").forEach((raw, i) => {
    if (raw.trim() === "") return;
    let value: unknown;
    try {
      value = parseStrictJson(raw);
    } catch (err) {
      throw new GateError("ERR_GATE_SCENARIO_INVALID", `${path}:${i + 1}: ${(err as Error).message}`);
    }
    const step = Step.safeParse(value);
    if (!step.success) {
      throw new GateError(
        "ERR_GATE_SCENARIO_INVALID",
        `${path}:${i + 1}: each line is {"call": GateRequest, "expect"?}, {"result": {...}} or a first-line {"scenario": {...}}`,
      );
    }
    if ("scenario" in step.data && steps.length > 0) {
      throw new GateError("ERR_GATE_SCENARIO_INVALID", `${path}:${i + 1}: "scenario" must be the first line`);
    }
    steps.push(step.data);
  });
  return steps;
}

function mismatch(expect: z.infer<typeof Expect>, line: DecisionLine): string | undefined {
  const e = typeof expect === "string" ? { decision: expect } : expect;
  if (e.decision !== line.decision) return `expected ${e.decision}, got ${line.decision}`;
  for (const c of e.reasonCodes ?? []) {
    if (!line.reasonCodes.includes(c)) return `expected reason code ${c} in [${line.reasonCodes.join(", ")}]`;
  }
  for (const r of e.matchedRules ?? []) {
    if (!line.matchedRules.includes(r))
      return `expected matched rule ${r} in [${line.matchedRules.join(", ")}]`;
  }
  for (const t of e.taintSources ?? []) {
    if (!line.taintSources.includes(t)) return `expected taint ${t} in [${line.taintSources.join(", ")}]`;
  }
  return undefined;
}

const GATE_OPTIONS = defineOptions({
  policy: {
    flags: "--policy <file...>",
    description: "policy files (.yaml/.yml/.json rules, .cedar)",
    kind: "values",
  },
  request: { flags: "--request <file>", description: "a GateRequest JSON file", kind: "value" },
  session: {
    flags: "--session <file>",
    description:
      'a JSONL session: {"call": GateRequest, "expect"?} or {"result": {taintLabels, data}} per line',
    kind: "value",
  },
  config: {
    flags: "--config <file>",
    description:
      "gate configuration (principals, roles, capabilities, context); default: any principal, no roles",
    kind: "value",
  },
  contracts: {
    flags: "--contracts <dir>",
    description: "directory of *.clad.toml tool contracts for requests that name a tool",
    kind: "value",
  },
  db: {
    flags: "--db <file>",
    description: "journal the decisions to this SQLite file (with --key); default: an in-memory journal",
    kind: "value",
  },
  key: { flags: "--key <file>", description: "Ed25519 private key that signs the journal", kind: "value" },
  check: {
    flags: "--check",
    description: "compare decisions with the session's `expect` fields; exit 1 on any mismatch",
    kind: "flag",
  },
});
type GateCliOptions = OptionsOf<typeof GATE_OPTIONS>;

/**
 * The runtime behind `warden gate`, from the composition root. Principal state stays in
 * memory: replaying a scenario is a what-if and must not quarantine anyone for real.
 */
async function buildGate(
  policies: string[],
  cfg: LoadedGateConfig | undefined,
  o: GateCliOptions,
): Promise<Runtime> {
  if (policies.length === 0) throw new CliError("ERR_CLI_USAGE", "at least one --policy FILE is required");
  if (o.db !== undefined && o.key === undefined) {
    throw new CliError("ERR_CLI_USAGE", "--db needs --key (the journal's Ed25519 private key)");
  }
  const signer = o.key !== undefined ? loadPrivateKeyFile(o.key) : generateKeyPair("ed25519");
  return composeRuntime(
    {
      policy: policies,
      // Contracts here are for classification only: loaded as the registry loads them.
      ...(o.contracts !== undefined ? { contracts: { dir: o.contracts } } : {}),
      journal: { path: o.db ?? ":memory:", signer },
      gate: {
        // Without a configuration every principal is known, with no roles and no capability limits.
        principals: cfg ? cfg.principals : (id) => ({ id, roles: [] }),
        ...(cfg?.context !== undefined ? { context: cfg.context } : {}),
        ...(cfg
          ? {
              tenantId: cfg.config.tenant,
              environment: cfg.config.environment,
              requireContract: cfg.config.requireContract,
              outputScreening: cfg.config.outputScreening,
            }
          : {}),
      },
    },
    { principalStore: new MemoryPrincipalStateStore() },
  );
}

async function runSession(ctx: CliContext, o: GateCliOptions): Promise<void> {
  const path = o.session as string;
  const steps = parseSession(path);
  const head = steps[0] !== undefined && "scenario" in steps[0] ? steps[0].scenario : undefined;
  const base = dirname(resolve(path));
  const policies = [...(head?.policies ?? []).map((p) => resolve(base, p)), ...(o.policy ?? [])];
  const cfg =
    o.config !== undefined
      ? loadGateConfig(o.config)
      : head?.config !== undefined
        ? parseGateConfig(head.config)
        : undefined;
  const rt = await buildGate(policies, cfg, o);
  try {
    await replay(ctx, o, path, steps, rt.gate);
  } finally {
    await rt.close();
  }
}

async function replay(
  ctx: CliContext,
  o: GateCliOptions,
  path: string,
  steps: Step[],
  gate: Gate,
): Promise<void> {
  let lastAdmitted: DecisionId | undefined;
  let failures = 0;
  let n = 0;
  for (const step of steps) {
    if ("scenario" in step) continue;
    if ("result" in step) {
      if (lastAdmitted === undefined) {
        throw new GateError(
          "ERR_GATE_SCENARIO_INVALID",
          `step ${n + 1}: a result must follow an allowed call`,
        );
      }
      const r = step.result;
      await gate.recordResult(lastAdmitted, {
        ...(r.taintLabels !== undefined ? { taintLabels: r.taintLabels } : {}),
        ...(r.data !== undefined ? { data: r.data } : {}),
        ...(r.classification !== undefined ? { classification: r.classification } : {}),
      });
      lastAdmitted = undefined;
      continue;
    }
    n++;
    const outcome = await gate.evaluate(step.call);
    const fault = faultOf(outcome);
    if (fault) throw new CliError("ERR_CLI_INPUT", `step ${n}: the Gate failed closed (${fault})`);
    lastAdmitted =
      outcome.decision === "allow" || outcome.decision === "modify"
        ? (outcome.decisionId ?? undefined)
        : undefined;
    const line = toLine(n, outcome);
    ctx.io.out(`${JSON.stringify(line)}\n`);
    if (o.check && step.expect !== undefined) {
      const why = mismatch(step.expect, line);
      if (why !== undefined) {
        failures++;
        ctx.io.err(`${path}: step ${n}: ${why}\n`);
      }
    }
  }
  if (o.check && failures > 0) ctx.exitCode = EXIT.failed;
}

export function registerGate(program: Command, ctx: CliContext): void {
  addOptions(program.command("gate"), GATE_OPTIONS)
    .description(SUMMARY.gate)
    .action(async (o: GateCliOptions) => {
      if ((o.request === undefined) === (o.session === undefined)) {
        throw new CliError("ERR_CLI_USAGE", "give exactly one of --request FILE or --session FILE");
      }
      try {
        if (o.session !== undefined) return await runSession(ctx, o);
        const cfg = o.config !== undefined ? loadGateConfig(o.config) : undefined;
        const rt = await buildGate(o.policy ?? [], cfg, o);
        let outcome: GateOutcome;
        try {
          outcome = await rt.gate.evaluate(readJsonFile(o.request as string));
        } finally {
          await rt.close();
        }
        const fault = faultOf(outcome);
        if (fault) throw new CliError("ERR_CLI_INPUT", `the Gate failed closed (${fault})`);
        const { step: _step, ...line } = toLine(1, outcome);
        ctx.io.out(
          `${JSON.stringify({ ...line, obligations: outcome.obligations, policyBundleHash: outcome.policyBundleHash }, null, 2)}\n`,
        );
      } catch (err) {
        if (err instanceof WardenError) throw err;
        throw new CliError("ERR_CLI_INPUT", (err as Error).message);
      }
    });
}
