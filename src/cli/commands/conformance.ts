// `warden conformance [--config FILE | --url URL] [--spec dare|oats|aarts|apae]… [--json]`:
// the specifications' verification procedures run against a deployment (docs/conformance.md).
// Library mode copies the configuration's directory to a private temp directory (journal
// files and the journal key left out) and composes every scenario's runtime from that copy with a fresh journal
// key, so the deployment's own journal, state and keys are never touched; the default is the
// example sidecar deployment. URL mode talks to a running sidecar with the tokens from
// $WARDEN_AGENT_TOKEN, $WARDEN_OPERATOR_TOKEN and $WARDEN_HOST_TOKEN.
// Exit codes: 0 no implemented check failed, 1 a check failed, 2 bad input.
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import {
  formatSummary,
  type LibraryTarget,
  type ProbeCall,
  parseProbe,
  runChecks,
  SPECS,
  type Spec,
  type Target,
} from "../../conformance/index.js";
import { CliError } from "../../contracts/index.js";
import { generateKeyPair } from "../../crypto/index.js";
import { loadSidecarConfig, sidecarRuntimeConfig } from "../../server/index.js";
import { type CliContext, EXIT } from "../io.js";
import { addOptions, defineOptions, type OptionsOf } from "../options.js";
import { SUMMARY } from "./summaries.js";

const OPTIONS = defineOptions({
  config: {
    flags: "--config <file>",
    description: "library mode: a sidecar configuration file (default: examples/sidecar/sidecar.yaml)",
    kind: "value",
  },
  url: {
    flags: "--url <url>",
    description:
      "URL mode: a running sidecar (tokens in $WARDEN_AGENT_TOKEN, $WARDEN_OPERATOR_TOKEN, $WARDEN_HOST_TOKEN)",
    kind: "value",
  },
  spec: {
    flags: "--spec <name>",
    description: "dare, oats, aarts or apae (repeatable; default all)",
    kind: "repeat",
  },
  agent: {
    flags: "--agent <principal>",
    description: "library mode: the agent principal (default: the first configured)",
    kind: "value",
  },
  probe: {
    flags: "--probe <json>",
    description:
      'a call the deployment allows: {"tool": NAME, "parameters": {...}, "textArg": NAME} (default: derived from the first contract)',
    kind: "value",
  },
  json: { flags: "--json", description: "print the results as JSON (for CI)", kind: "flag" },
});

type Options = OptionsOf<typeof OPTIONS>;

/** The example deployment shipped beside the package. */
export function exampleConfig(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const p = join(dir, "examples", "sidecar", "sidecar.yaml");
    if (existsSync(p)) return p;
    dir = dirname(dir);
  }
  throw new CliError(
    "ERR_CLI_USAGE",
    "examples/sidecar/sidecar.yaml not found beside the package; give --config",
  );
}

function specsOf(names: readonly string[]): Spec[] {
  for (const n of names)
    if (!(SPECS as readonly string[]).includes(n))
      throw new CliError(
        "ERR_CLI_USAGE",
        `--spec must be one of ${SPECS.join(", ")} (got ${n.slice(0, 40)})`,
      );
  return names as Spec[];
}

function probeOf(text: string | undefined): ProbeCall | undefined {
  if (text === undefined) return undefined;
  const r = parseProbe(text);
  if (!r.ok) throw new CliError("ERR_CLI_USAGE", `--probe: ${r.message}`);
  return r.probe;
}

/**
 * A copy of the configuration's directory without journal databases, evidence directories
 * or the journal's private key (scenarios sign with fresh keys); its config file path.
 */
function copyDeployment(file: string, into: string): string {
  if (!existsSync(file)) throw new CliError("ERR_CLI_INPUT", `no configuration file ${file}`);
  const journalKey = resolve(loadSidecarConfig(file).config.journal.key);
  const from = dirname(resolve(file));
  cpSync(from, into, {
    recursive: true,
    filter: (src) => resolve(src) !== journalKey && !/\.db(-wal|-shm)?$|\.evidence$/.test(src),
  });
  return join(into, basename(file));
}

function libraryTarget(file: string, copy: string, o: Options): LibraryTarget {
  const loaded = loadSidecarConfig(copy);
  const config = sidecarRuntimeConfig(loaded, generateKeyPair("ed25519"));
  const principals = Object.values(loaded.gate.principals);
  const agent = o.agent ?? (principals.find((p) => p.roles.includes("agent")) ?? principals[0])?.id;
  if (agent === undefined)
    throw new CliError("ERR_CLI_INPUT", "the configuration names no principal to act as");
  const probe = probeOf(o.probe);
  return { kind: "library", label: file, config, agent, ...(probe ? { probe } : {}) };
}

function urlTarget(url: string, o: Options): Target {
  if (!/^https?:\/\//.test(url)) throw new CliError("ERR_CLI_USAGE", "--url must be an http(s) URL");
  const agentToken = process.env.WARDEN_AGENT_TOKEN;
  if (!agentToken)
    throw new CliError("ERR_CLI_USAGE", "URL mode needs the agent token in $WARDEN_AGENT_TOKEN");
  const operatorToken = process.env.WARDEN_OPERATOR_TOKEN;
  const hostToken = process.env.WARDEN_HOST_TOKEN;
  const probe = probeOf(o.probe);
  return {
    kind: "url",
    url,
    agentToken,
    ...(operatorToken ? { operatorToken } : {}),
    ...(hostToken ? { hostToken } : {}),
    ...(probe ? { probe } : {}),
  };
}

async function conformance(ctx: CliContext, o: Options): Promise<void> {
  if (o.config !== undefined && o.url !== undefined)
    throw new CliError("ERR_CLI_USAGE", "give --config or --url, not both");
  const specs = specsOf(o.spec);
  const scratch = mkdtempSync(join(tmpdir(), "warden-conformance-deployment-"));
  try {
    let target: Target;
    if (o.url !== undefined) target = urlTarget(o.url, o);
    else {
      const file = o.config ?? exampleConfig();
      target = libraryTarget(file, copyDeployment(file, join(scratch, "deployment")), o);
    }
    const summary = await runChecks(target, { specs });
    ctx.io.out(o.json ? `${JSON.stringify(summary, null, 2)}\n` : formatSummary(summary));
    ctx.exitCode = summary.passed ? EXIT.ok : EXIT.failed;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

export function registerConformance(program: Command, ctx: CliContext): void {
  addOptions(program.command("conformance").description(SUMMARY.conformance), OPTIONS).action((o: Options) =>
    conformance(ctx, o),
  );
}
