// `warden run`: a governed agent from the command line. The model (an OpenAI-compatible
// endpoint or a scripted list of turns) proposes; the Gate decides each call against the
// contracts and policies; only ticketed calls run; every step is printed and journaled,
// and the journal is verified at the end.
// Exit codes: 0 the agent gave a final answer and the journal verifies; 1 any other end
// (quarantined, limits, model or Gate faults) or a journal that does not verify; 2 bad input.
import type { Command } from "commander";
import { CliError } from "../../contracts/index.js";
import { type ModelAdapter, OpenAICompatibleAdapter, ScriptedAdapter } from "../../loop/index.js";
import { behaviorFacts, profileGaps, refuseUnmetProfile } from "../../runtime/index.js";
import { formatStep, journalSummary, runAgent } from "../agent-run.js";
import { loadCliGateConfig } from "../gate-config.js";
import { type CliContext, EXIT } from "../io.js";
import { addOptions, defineOptions, type OptionsOf } from "../options.js";
import { openRuntime, type Runtime, type RuntimeOptions } from "../runtime.js";
import { SUMMARY } from "./summaries.js";

function positiveInt(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9][0-9]{0,5}$/.test(value))
    throw new CliError("ERR_CLI_USAGE", `${flag} must be a positive integer`);
  return Number(value);
}

/** Flags shared by `run` and `exec` that describe the runtime. */
const RUNTIME_OPTIONS = defineOptions({
  contracts: {
    flags: "--contracts <dir>",
    description: "directory of *.clad.toml tool contracts",
    kind: "value",
    required: true,
  },
  policy: {
    flags: "--policy <file>",
    description: "policy file, .yaml/.yml/.json or .cedar (repeatable)",
    kind: "repeat",
    required: true,
  },
  config: {
    flags: "--config <file>",
    description: "gate configuration (principals, context); default: the principal has no roles",
    kind: "value",
  },
  principal: {
    flags: "--principal <id>",
    description: "the principal the agent acts as",
    kind: "value",
    default: "agent",
  },
  db: { flags: "--db <file>", description: "SQLite journal (default: a new temp file)", kind: "value" },
  key: {
    flags: "--key <file>",
    description: "Ed25519 journal key (default: <db>.key.pem, generated with mode 0600 if missing)",
    kind: "value",
  },
  allowLoopback: {
    flags: "--allow-loopback",
    description: "let the HTTP executor reach 127.0.0.0/8 and ::1 (local tools and demos)",
    kind: "flag",
  },
  sandbox: {
    flags: "--sandbox <dir>",
    description: "file tool root and process working directory (default: the current directory)",
    kind: "value",
  },
});

export type RuntimeFlags = OptionsOf<typeof RUNTIME_OPTIONS>;

export function addRuntimeOptions(cmd: Command): Command {
  return addOptions(cmd, RUNTIME_OPTIONS);
}

export function runtimeOptions(f: RuntimeFlags): RuntimeOptions {
  if (f.policy.length === 0) throw new CliError("ERR_CLI_USAGE", "at least one --policy is required");
  return {
    contracts: f.contracts,
    policy: f.policy,
    principal: f.principal,
    ...(f.config !== undefined ? { config: f.config } : {}),
    ...(f.db !== undefined ? { db: f.db } : {}),
    ...(f.key !== undefined ? { key: f.key } : {}),
    ...(f.allowLoopback === true ? { allowLoopback: true } : {}),
    ...(f.sandbox !== undefined ? { sandbox: f.sandbox } : {}),
  };
}

/** Lines that say where the journal is and how to verify it. */
export function journalBanner(rt: Runtime): string {
  let s = `journal   ${rt.dbPath}  (key ${rt.key.keyId})\n`;
  if (rt.key.generatedAt !== undefined) {
    s += `key       generated ${rt.key.generatedAt} (0600); public key for verification:\n${rt.key.publicKeyPem}`;
  }
  for (const r of rt.rejectedContracts) s += `warning   contract not loaded: ${r.code}: ${r.message}\n`;
  return s;
}

const RUN_OPTIONS = defineOptions({
  modelUrl: {
    flags: "--model-url <url>",
    description: "OpenAI-compatible base URL, e.g. http://127.0.0.1:11434/v1",
    kind: "value",
  },
  model: { flags: "--model <name>", description: "model name for --model-url", kind: "value" },
  apiKeyEnv: {
    flags: "--api-key-env <name>",
    description: "environment variable holding the API key (default: send no key)",
    kind: "value",
  },
  script: {
    flags: "--script <file>",
    description: "scripted model turns (YAML or JSON) instead of a model endpoint",
    kind: "value",
  },
  maxIterations: {
    flags: "--max-iterations <n>",
    description: "model turns before the run stops (default 16)",
    kind: "value",
  },
  json: { flags: "--json", description: "print one JSON document instead of readable steps", kind: "flag" },
});

type RunFlags = RuntimeFlags & OptionsOf<typeof RUN_OPTIONS>;

function modelFrom(f: RunFlags): ModelAdapter {
  const remote = f.modelUrl !== undefined || f.model !== undefined;
  if (f.script !== undefined && remote)
    throw new CliError("ERR_CLI_USAGE", "give either --script or --model-url with --model, not both");
  if (f.script !== undefined) return ScriptedAdapter.fromFile(f.script);
  if (f.modelUrl === undefined || f.model === undefined)
    throw new CliError(
      "ERR_CLI_USAGE",
      "a model is required: --script FILE, or --model-url URL with --model NAME",
    );
  return new OpenAICompatibleAdapter({
    baseUrl: f.modelUrl,
    model: f.model,
    apiKeyEnv: f.apiKeyEnv ?? null,
  });
}

/**
 * The sidecar's start check for the `apae:` section of `--config`: a Regulated deployment
 * missing a required mechanism does not run (ERR_TRUST_PROFILE_UNMET, exit 2). `warden run`
 * has no approvers, so Regulated's mandatory HITL gates are never met here; the runtime
 * itself checks the contracts' provenance claims and checkpoints.
 */
function refuseUnmetRunProfile(rt: Runtime, config: string | undefined): void {
  const apae = config === undefined ? undefined : loadCliGateConfig(config).apae;
  if (apae === undefined) return;
  const profile = apae.profile ?? "standard";
  refuseUnmetProfile(profile, profileGaps(profile, apae, rt.policy, 0, behaviorFacts(apae)));
}

export function registerRun(program: Command, ctx: CliContext): void {
  addOptions(
    addRuntimeOptions(
      program.command("run").description(SUMMARY.run).argument("<task>", "the user's task (trusted input)"),
    ),
    RUN_OPTIONS,
  ).action(async (task: string, f: RunFlags) => {
    const model = modelFrom(f);
    const maxIterations = positiveInt("--max-iterations", f.maxIterations);
    const rt = await openRuntime(runtimeOptions(f));
    try {
      refuseUnmetRunProfile(rt, f.config);
      if (!f.json) ctx.io.out(`task      ${task}\nmodel     ${model.id}\n${journalBanner(rt)}\n`);
      const run = await runAgent(
        rt,
        { model, task, ...(maxIterations !== undefined ? { limits: { maxIterations } } : {}) },
        (s) => {
          if (!f.json) ctx.io.out(formatStep(s));
        },
      );
      const journal = await journalSummary(rt);
      const r = run.result;
      if (r.reason !== "final_answer" || !journal.verified) ctx.exitCode = EXIT.failed;
      if (f.json) {
        ctx.io.out(
          `${JSON.stringify(
            {
              runId: r.runId,
              task,
              model: model.id,
              principal: rt.principalId,
              steps: run.steps,
              result: {
                reason: r.reason,
                finalText: r.finalText,
                iterations: r.iterations,
                toolCalls: r.toolCalls,
                decisions: r.decisions,
                taintSources: r.taintSources,
                usage: r.usage,
              },
              quarantined: run.quarantined,
              quarantineReason: run.quarantineReason,
              journal,
              key: rt.key,
            },
            null,
            2,
          )}\n`,
        );
        return;
      }
      const d = r.decisions;
      ctx.io.out(
        `\nrun       ${r.runId}\nended     ${r.reason} after ${r.iterations} turn(s), ${r.toolCalls} tool call(s)\n` +
          `decisions allow ${d.allow}, modify ${d.modify}, deny ${d.deny}, step_up ${d.step_up}, defer ${d.defer}, rejected by contract ${d.rejected}\n` +
          `quarantine ${run.quarantined ? `yes (${run.quarantineReason ?? "no reason recorded"})` : "no"}\n` +
          `journal   ${journal.verified ? "verified" : `NOT VERIFIED: ${journal.failure}`}, ${journal.entries} entries, head ${journal.head ?? "-"}\n` +
          (r.finalText !== null ? `answer    ${r.finalText}\n` : ""),
      );
    } finally {
      await rt.close();
    }
  });
}
