// `warden run`: a governed agent from the command line. The model (an OpenAI-compatible
// endpoint or a scripted list of turns) proposes; the Gate decides each call against the
// contracts and policies; only ticketed calls run; every step is printed and journaled,
// and the journal is verified at the end.
// Exit codes: 0 the agent gave a final answer and the journal verifies; 1 any other end
// (quarantined, limits, model or Gate faults) or a journal that does not verify; 2 bad input.
import type { Command } from "commander";
import { CliError } from "../../contracts/index.js";
import { type ModelAdapter, OpenAICompatibleAdapter, ScriptedAdapter } from "../../loop/index.js";
import { formatStep, journalSummary, runAgent } from "../agent-run.js";
import { type CliContext, EXIT } from "../io.js";
import { openRuntime, type Runtime, type RuntimeOptions } from "../runtime.js";
import { SUMMARY } from "./summaries.js";

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function positiveInt(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9][0-9]{0,5}$/.test(value))
    throw new CliError("ERR_CLI_USAGE", `${flag} must be a positive integer`);
  return Number(value);
}

/** Flags shared by `run` and `exec` that describe the runtime. */
export interface RuntimeFlags {
  contracts: string;
  policy: string[];
  config?: string;
  principal: string;
  db?: string;
  key?: string;
  allowLoopback?: boolean;
  sandbox?: string;
}

export function addRuntimeOptions(cmd: Command): Command {
  return cmd
    .requiredOption("--contracts <dir>", "directory of *.clad.toml tool contracts")
    .requiredOption("--policy <file>", "policy file, .yaml/.yml/.json or .cedar (repeatable)", collect, [])
    .option(
      "--config <file>",
      "gate configuration (principals, context); default: the principal has no roles",
    )
    .option("--principal <id>", "the principal the agent acts as", "agent")
    .option("--db <file>", "SQLite journal (default: a new temp file)")
    .option(
      "--key <file>",
      "Ed25519 journal key (default: <db>.key.pem, generated with mode 0600 if missing)",
    )
    .option("--allow-loopback", "let the HTTP executor reach 127.0.0.0/8 and ::1 (local tools and demos)")
    .option(
      "--sandbox <dir>",
      "file tool root and process working directory (default: the current directory)",
    );
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

interface RunFlags extends RuntimeFlags {
  modelUrl?: string;
  model?: string;
  apiKeyEnv?: string;
  script?: string;
  maxIterations?: string;
  json?: boolean;
}

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

export function registerRun(program: Command, ctx: CliContext): void {
  addRuntimeOptions(
    program.command("run").description(SUMMARY.run).argument("<task>", "the user's task (trusted input)"),
  )
    .option("--model-url <url>", "OpenAI-compatible base URL, e.g. http://127.0.0.1:11434/v1")
    .option("--model <name>", "model name for --model-url")
    .option("--api-key-env <name>", "environment variable holding the API key (default: send no key)")
    .option("--script <file>", "scripted model turns (YAML or JSON) instead of a model endpoint")
    .option("--max-iterations <n>", "model turns before the run stops (default 16)")
    .option("--json", "print one JSON document instead of readable steps")
    .action(async (task: string, f: RunFlags) => {
      const model = modelFrom(f);
      const maxIterations = positiveInt("--max-iterations", f.maxIterations);
      const rt = await openRuntime(runtimeOptions(f));
      try {
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
