// `warden contract ...`: tool contracts. validate, check and schema are the tools layer's
// (parse a manifest; validate arguments and show the invocation that would run; print
// the model's view); sign and verify are registered by tools/integrity.
// Exit codes: 0 valid/accepted, 1 the manifest or the arguments were rejected, 2 bad input.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Command } from "commander";
import { CliError, parseStrictJson } from "../../contracts/index.js";
import {
  type ContractFailure,
  type CustomType,
  describeInvocation,
  loadContract,
  loadProjectTypes,
  type ParseResult,
  PROJECT_TYPES_FILE,
  prepareInvocation,
  type ScopeInput,
  toModelTool,
} from "../../tools/index.js";
import { type CliContext, EXIT, readJsonFile } from "../io.js";
import { addOptions, defineOptions, type OptionsOf } from "../options.js";
import { registerContractIntegrity } from "./contract-integrity.js";
import { SUMMARY } from "./summaries.js";

const MAX_ARGS_JSON = 256 * 1024;

const TYPES = {
  flags: "--types <file>",
  description: "project types (default: toolclad.toml beside the manifest)",
  kind: "value",
} as const;
const JSON_FLAG = { flags: "--json", description: "print the result as JSON", kind: "flag" } as const;

const VALIDATE_OPTIONS = defineOptions({ types: TYPES, json: JSON_FLAG });
const SCHEMA_OPTIONS = defineOptions({ types: TYPES });
const CHECK_OPTIONS = defineOptions({
  args: {
    flags: "--args <json>",
    description: "the arguments as a JSON object",
    kind: "value",
    required: true,
  },
  scope: {
    flags: "--scope <file>",
    description: "deployment scope JSON: {allowed_cidrs, allowed_hosts, denied_cidrs, denied_hosts}",
    kind: "value",
  },
  anyScope: {
    flags: "--any-scope",
    description:
      "accept any target when no scope is configured (otherwise scope-checked arguments fail closed)",
    kind: "flag",
  },
  types: TYPES,
  json: JSON_FLAG,
});

type LoadOpts = OptionsOf<typeof SCHEMA_OPTIONS>;

/** Project types: --types FILE, else a toolclad.toml beside the manifest. */
function projectTypes(file: string, opts: LoadOpts): Record<string, CustomType> | undefined {
  if (opts.types !== undefined) return loadProjectTypes(opts.types);
  const beside = join(dirname(file), PROJECT_TYPES_FILE);
  return existsSync(beside) ? loadProjectTypes(beside) : undefined;
}

function load(file: string, opts: LoadOpts): ParseResult {
  const types = projectTypes(file, opts);
  return loadContract(file, types === undefined ? {} : { types });
}

function reportFailure(
  ctx: CliContext,
  f: ContractFailure | { code: string; message: string },
  json: boolean,
): void {
  ctx.exitCode = EXIT.failed;
  if (json) ctx.io.out(`${JSON.stringify({ ok: false, ...f }, null, 2)}\n`);
  else ctx.io.err(`warden: ${f.code}: ${f.message}\n`);
}

export function registerContract(program: Command, ctx: CliContext): void {
  const group = program.command("contract").description(SUMMARY.contract);

  addOptions(
    group
      .command("validate")
      .description("parse and compile a *.clad.toml manifest; exit 1 if it is invalid")
      .argument("<file>", "manifest"),
    VALIDATE_OPTIONS,
  ).action((file: string, opts: OptionsOf<typeof VALIDATE_OPTIONS>) => {
    const r = load(file, opts);
    if (!r.ok) return reportFailure(ctx, r, opts.json === true);
    const c = r.tool.contract;
    const backend = r.tool.backend.kind;
    if (opts.json) {
      ctx.io.out(
        `${JSON.stringify({ ok: true, name: c.tool.name, version: c.tool.version, backend, args: [...r.tool.args.keys()] }, null, 2)}\n`,
      );
      return;
    }
    ctx.io.out(`ok  ${c.tool.name} ${c.tool.version} (${backend}, ${r.tool.args.size} argument(s))\n`);
  });

  addOptions(
    group
      .command("check")
      .description("validate arguments against a manifest and print the invocation that would run")
      .argument("<file>", "manifest"),
    CHECK_OPTIONS,
  ).action((file: string, opts: OptionsOf<typeof CHECK_OPTIONS>) => {
    let args: unknown;
    try {
      args = parseStrictJson(opts.args, { maxLength: MAX_ARGS_JSON });
    } catch (err) {
      throw new CliError("ERR_CLI_INPUT", `--args is not valid JSON: ${(err as Error).message}`);
    }
    const r = load(file, opts);
    if (!r.ok) return reportFailure(ctx, r, opts.json === true);
    const options: Parameters<typeof prepareInvocation>[2] = {
      // Placeholders for executor-provided values, so the invocation can be shown.
      runtime: { outputFile: "<output_file>", scanId: "<scan_id>", evidenceDir: "<evidence_dir>" },
    };
    if (opts.scope !== undefined) options.scope = readJsonFile(opts.scope) as ScopeInput;
    if (opts.anyScope === true) options.unrestrictedScope = true;
    const prepared = prepareInvocation(r.tool, args, options);
    if (!prepared.ok) return reportFailure(ctx, prepared, opts.json === true);
    const out = { ok: true, args: prepared.args, invocation: describeInvocation(prepared.invocation) };
    ctx.io.out(`${JSON.stringify(out, null, 2)}\n`);
  });

  addOptions(
    group
      .command("schema")
      .description(
        "print the MCP tool definition the model sees (name, description, inputSchema, outputSchema)",
      )
      .argument("<file>", "manifest"),
    SCHEMA_OPTIONS,
  ).action((file: string, opts: LoadOpts) => {
    const r = load(file, opts);
    if (!r.ok) return reportFailure(ctx, r, false);
    ctx.io.out(`${JSON.stringify(toModelTool(r.tool), null, 2)}\n`);
  });

  // --- integrity subcommands (sign, verify): src/cli/commands/contract-integrity.ts ---
  registerContractIntegrity(group, ctx);
}
