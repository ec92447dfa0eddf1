// `warden db pins|repin --url URL`: the SchemaPin contract-key pins and hook source pins
// every replica shares (docs/distributed.md, migration 6). `pins` lists them; `repin` is
// the operator's re-pin after a genuine key rotation (checked out of band): the given
// fingerprint is the pin of (tool, domain) from now on, for every replica started
// afterwards (a running replica keeps refusing the new key as changed until it restarts).
import type { Command } from "commander";
import { CliError, isoTime } from "../../contracts/index.js";
import { checkSchema, openPool, PgTofuPins, TOFU_PIN_KINDS, type TofuPinKind } from "../../store-pg/index.js";
import type { CliContext } from "../io.js";
import { addOptions, defineOptions, type OptionsOf } from "../options.js";

const FINGERPRINT = /^sha256:[0-9a-f]{64}$/;
const URL_OPTION = {
  flags: "--url <url>",
  description: "postgres://user:pass@host/db, or env:NAME to read it from the environment",
  kind: "value",
  required: true,
} as const;
const KIND_OPTION = {
  flags: "--kind <kind>",
  description: "schemapin (contract signing keys) or hook-source (hooks source trust)",
  kind: "value",
  required: true,
} as const;

const PINS_OPTIONS = defineOptions({
  url: URL_OPTION,
  kind: KIND_OPTION,
  json: { flags: "--json", description: "print the pins as JSON", kind: "flag" },
});
const REPIN_OPTIONS = defineOptions({
  url: URL_OPTION,
  kind: KIND_OPTION,
  tool: {
    flags: "--tool <id>",
    description: "the pinned tool id (hook sources: kind:id, e.g. mcp-server:github)",
    kind: "value",
    required: true,
  },
  domain: { flags: "--domain <domain>", description: "the signing domain", kind: "value", required: true },
  fingerprint: {
    flags: "--fingerprint <sha256:hex>",
    description: "the new key's fingerprint",
    kind: "value",
    required: true,
  },
});

function kindOf(kind: string): TofuPinKind {
  if (!(TOFU_PIN_KINDS as readonly string[]).includes(kind))
    throw new CliError("ERR_CLI_USAGE", `--kind must be one of ${TOFU_PIN_KINDS.join(", ")}`);
  return kind as TofuPinKind;
}

async function withPins<T>(url: string, fn: (pins: PgTofuPins) => Promise<T>): Promise<T> {
  const pool = openPool({ kind: "postgres", url, pool: { max: 1 } });
  try {
    await checkSchema(pool);
    return await fn(new PgTofuPins(pool));
  } finally {
    await pool.end().catch(() => undefined);
  }
}

async function runPins(ctx: CliContext, opts: OptionsOf<typeof PINS_OPTIONS>): Promise<void> {
  const kind = kindOf(opts.kind);
  const pins = await withPins(opts.url, (p) => p.load(kind));
  if (opts.json) {
    ctx.io.out(`${JSON.stringify(pins)}\n`);
    return;
  }
  for (const p of pins) ctx.io.out(`${p.toolId}@${p.domain}  ${p.fingerprint}  ${p.pinnedAt}\n`);
  if (pins.length === 0) ctx.io.out(`no ${kind} pins\n`);
}

async function runRepin(ctx: CliContext, opts: OptionsOf<typeof REPIN_OPTIONS>): Promise<void> {
  const kind = kindOf(opts.kind);
  const fingerprint = opts.fingerprint.toLowerCase();
  if (!FINGERPRINT.test(fingerprint))
    throw new CliError("ERR_CLI_USAGE", "--fingerprint must be sha256:<64 hex>");
  if (opts.tool.length === 0 || opts.tool.length > 512)
    throw new CliError("ERR_CLI_USAGE", "--tool must be 1..512 characters");
  if (!/^[^\s@/]{1,253}$/.test(opts.domain)) throw new CliError("ERR_CLI_USAGE", "--domain is not a domain");
  const entry = { toolId: opts.tool, domain: opts.domain, fingerprint, pinnedAt: isoTime(new Date()) };
  const before = await withPins(opts.url, async (p) => {
    const old = await p.get(kind, entry.toolId, entry.domain);
    await p.replace(kind, entry);
    return old;
  });
  ctx.io.out(
    `re-pinned ${kind} ${entry.toolId}@${entry.domain} to ${fingerprint}` +
      `${before === undefined ? " (was not pinned)" : ` (was ${before.fingerprint})`}; replicas started from now on use it\n`,
  );
}

export function registerDbPins(db: Command, ctx: CliContext): void {
  addOptions(
    db
      .command("pins")
      .description("list the TOFU key pins every replica shares (contract keys, hook sources)"),
    PINS_OPTIONS,
  ).action((opts: OptionsOf<typeof PINS_OPTIONS>) => runPins(ctx, opts));
  addOptions(
    db
      .command("repin")
      .description("the operator's re-pin of a shared TOFU pin after a genuine key rotation"),
    REPIN_OPTIONS,
  ).action((opts: OptionsOf<typeof REPIN_OPTIONS>) => runRepin(ctx, opts));
}
