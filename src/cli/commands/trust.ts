// `warden trust simulate` (the real trust engine on a JSONL file of events, offline) and
// `warden trust explain AGENT --journal DB` (a score's derivation from journaled trust
// steps); `warden trust lift` (an approver's signed early lift, trust-lift.ts). Output
// formats are stable API, documented in docs/trust.md.
import type { Command } from "commander";
import { parse as parseYaml } from "yaml";
import { CliError } from "../../contracts/index.js";
import { openEmbeddedStore } from "../../journal/index.js";
import {
  DEFAULT_TRUST_CONFIG,
  explainTrust,
  parseIsoTime,
  parseTrustConfig,
  simulateTrust,
  TRUST_STEP_EVENT,
  type TrustConfig,
} from "../../trust/index.js";
import { type CliContext, EXIT, readTextFile } from "../io.js";
import { SUMMARY } from "./summaries.js";
import { registerTrustLift } from "./trust-lift.js";

const MAX_EVENTS_FILE = 64 * 1024 * 1024;
const MAX_CONFIG_FILE = 1024 * 1024;

function loadConfig(path: string | undefined): TrustConfig {
  if (path === undefined) return DEFAULT_TRUST_CONFIG;
  let doc: unknown;
  try {
    doc = parseYaml(readTextFile(path, MAX_CONFIG_FILE), { maxAliasCount: 0 });
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError("ERR_CLI_INPUT", `${path} is not YAML or JSON`);
  }
  return parseTrustConfig(doc ?? {});
}

interface SimulateOpts {
  events: string;
  config?: string;
  until?: string;
  json?: boolean;
}

async function simulate(ctx: CliContext, opts: SimulateOpts): Promise<void> {
  const config = loadConfig(opts.config);
  let until: number | undefined;
  if (opts.until !== undefined) {
    until = parseIsoTime(opts.until);
    if (until === undefined)
      throw new CliError("ERR_CLI_USAGE", "--until must be an RFC 3339 date-time with a zone");
  }
  const text = readTextFile(opts.events, MAX_EVENTS_FILE);
  const result = await simulateTrust(text, until === undefined ? { config } : { config, until });
  ctx.io.out(`${JSON.stringify(result, null, opts.json ? undefined : 2)}\n`);
}

interface ExplainOpts {
  journal: string;
  truster?: string;
  json?: boolean;
}

async function explain(ctx: CliContext, agent: string, opts: ExplainOpts): Promise<void> {
  const truster = opts.truster ?? DEFAULT_TRUST_CONFIG.self_id;
  const store = openEmbeddedStore(opts.journal, { readonly: true });
  try {
    // Malformed rows are left out here; `warden journal verify` reports them.
    const d = explainTrust(await store.query({ type: TRUST_STEP_EVENT }), agent, truster);
    if (opts.json) {
      ctx.io.out(`${JSON.stringify(d)}\n`);
    } else {
      ctx.io.out(`trust of ${truster} in ${agent}: ${d.score ?? "no journaled steps (initial score)"}\n`);
      for (const s of d.steps) {
        const note = s.note === undefined ? "" : ` (${s.note})`;
        ctx.io.out(
          `  #${s.seq} ${s.time} ${s.kind}${s.ect ? ` ect=${s.ect}` : ""}: ${s.before} -> ${s.after}${note}\n`,
        );
      }
      for (const b of d.breaks)
        ctx.io.out(`  BREAK at #${b.seq}: expected ${b.expected}, found ${b.found}\n`);
    }
    if (d.breaks.length > 0) ctx.exitCode = EXIT.failed;
  } finally {
    await store.close();
  }
}

export function registerTrust(program: Command, ctx: CliContext): void {
  const trust = program.command("trust").description(SUMMARY.trust);
  trust
    .command("simulate")
    .description("run the trust engine on a JSONL file of trust events; print the table and the emitted ECTs")
    .requiredOption(
      "--events <file>",
      "JSONL: one {time, subject, event, truster?} per line, applied in file order",
    )
    .option("--config <file>", "trust settings (YAML or JSON) overriding the spec defaults")
    .option("--until <time>", "advance the clock to this RFC 3339 time after the last event")
    .option("--json", "print compact JSON (one line)")
    .action((opts: SimulateOpts) => simulate(ctx, opts));
  trust
    .command("explain")
    .description("show how an agent's trust score was derived, from the journaled trust steps")
    .argument("<agent>", "the subject agent")
    .requiredOption("--journal <db>", "the SQLite journal")
    .option("--truster <id>", "whose table (default: the deployment itself)")
    .option("--json", "print the derivation as JSON")
    .action((agent: string, opts: ExplainOpts) => explain(ctx, agent, opts));
  registerTrustLift(trust, ctx);
}
