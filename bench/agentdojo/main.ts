// `npm run bench -- agentdojo [--suite-dir DIR]… [--out FILE] [--annotations FILE]
// [--phrasing NAME]… [--mode NAME]… [--failures]`: plays every suite (default: every folder
// of ../shared/agentdojo/export) and prints the table and the rule list; --out writes the
// request lines (README format) of the defended run; --failures lists every pair a defended
// mode got wrong, with the call that did the harm and the flow facts policy saw.
import { existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { readAnnotations } from "./catalog.js";
import { formatFailures } from "./failures.js";
import { PHRASINGS, type Phrasing } from "./phrasing.js";
import { formatReport } from "./report.js";
import { type Mode, runSuite, type SuiteReport } from "./run.js";
import { loadSuite, SuiteError } from "./suite.js";

export const DEFAULT_EXPORT = "../shared/agentdojo/export";

export interface BenchArgs {
  suiteDirs: string[];
  out?: string;
  annotations?: string;
  ablation: boolean;
  /** Attack phrasings to play (default: every one of PHRASINGS). */
  phrasings: Phrasing[];
  /** Defended modes to play (default: every one). */
  modes: Mode[];
  /** List every failing pair of the defended modes (the harmful call and its flow facts). */
  failures: boolean;
}

const MODES: readonly Mode[] = ["warden", "flow-only", "screening-only", "warden+annotations"];

export function parseArgs(argv: readonly string[]): BenchArgs {
  const args: BenchArgs = { suiteDirs: [], ablation: true, phrasings: [], modes: [], failures: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined || v.startsWith("--")) throw new SuiteError(`${a} needs a value`);
      return v;
    };
    if (a === "--suite-dir") args.suiteDirs.push(value());
    else if (a === "--out") args.out = value();
    else if (a === "--annotations") args.annotations = value();
    else if (a === "--no-ablation") args.ablation = false;
    else if (a === "--failures") args.failures = true;
    else if (a === "--mode") {
      const m = value();
      if (!MODES.includes(m as Mode)) throw new SuiteError(`--mode must be one of ${MODES.join(", ")}`);
      args.modes.push(m as Mode);
    } else if (a === "--phrasing") {
      const p = value();
      if (!PHRASINGS.includes(p as Phrasing))
        throw new SuiteError(`--phrasing must be one of ${PHRASINGS.join(", ")}`);
      args.phrasings.push(p as Phrasing);
    } else
      throw new SuiteError(
        `unknown argument ${a} (--suite-dir DIR, --out FILE, --annotations FILE, --phrasing NAME, --mode NAME, --failures, --no-ablation)`,
      );
  }
  if (args.phrasings.length === 0) args.phrasings = [...PHRASINGS];
  return args;
}

/** The suite folders to play: the given ones, or every folder of the default export. */
export function suiteDirs(args: BenchArgs, cwd = process.cwd()): string[] {
  if (args.suiteDirs.length > 0) return args.suiteDirs.map((d) => resolve(cwd, d));
  const root = resolve(cwd, process.env.WARDEN_AGENTDOJO || DEFAULT_EXPORT);
  if (!existsSync(root))
    throw new SuiteError(
      `no AgentDojo export at ${root}: set WARDEN_AGENTDOJO to the export folder or pass --suite-dir DIR (repeatable) for each suite folder (see docs/agentdojo.md)`,
    );
  return readdirSync(root)
    .map((d) => join(root, d))
    .filter((d) => statSync(d).isDirectory())
    .sort();
}

export async function runBench(
  args: BenchArgs,
  policy: readonly string[],
): Promise<{ text: string; reports: SuiteReport[] }> {
  const reports: SuiteReport[] = [];
  for (const dir of suiteDirs(args)) {
    const suite = loadSuite(dir);
    const annotations = readAnnotations(suite, args.annotations);
    for (const phrasing of args.phrasings)
      reports.push(
        await runSuite(suite, {
          policy,
          annotations,
          ablation: args.ablation,
          phrasing,
          failures: args.failures,
          ...(args.modes.length > 0 ? { modes: args.modes } : {}),
        }),
      );
  }
  if (args.out !== undefined) {
    const lines = reports.flatMap((r) => r.requests).map((l) => JSON.stringify(l));
    writeFileSync(args.out, `${lines.join("\n")}\n`);
  }
  const text = formatReport(reports);
  return { text: args.failures ? `${text}\n\n${formatFailures(reports)}` : text, reports };
}

/** The preset, found from the repository root (the working directory of `npm run bench`). */
export function presetPath(cwd = process.cwd()): string {
  return resolve(cwd, "policies/assistant-tools.yaml");
}

/** The command: prints the report; a usage or data error is one line on stderr and exit code 1. */
export async function cli(argv: readonly string[]): Promise<void> {
  try {
    const { text } = await runBench(parseArgs(argv), [presetPath()]);
    process.stdout.write(`${text}\n`);
  } catch (err) {
    process.stderr.write(`agentdojo: ${(err as Error).message}\n`);
    process.exitCode = 1;
  }
}
