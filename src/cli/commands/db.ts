// `warden db migrate|status --url URL`: the shared PostgreSQL store's schema
// (docs/distributed.md). `migrate` applies the migrations the database lacks, each with
// its `schema_version` row, in one transaction; `status` prints the versions and exits 1
// when a runtime of this Warden would refuse to start on the database. `pins`/`repin`:
// the shared TOFU pins (db-pins.ts).
import type { Command } from "commander";
import { CliError, hasErrorCode } from "../../contracts/index.js";
import { checkSchema, migrate, openPool, SCHEMA_VERSION } from "../../store-pg/index.js";
import { type CliContext, EXIT } from "../io.js";
import { addOptions, defineOptions, type OptionsOf } from "../options.js";
import { registerDbPins } from "./db-pins.js";
import { SUMMARY } from "./summaries.js";

const URL_OPTION = {
  flags: "--url <url>",
  description: "postgres://user:pass@host/db, or env:NAME to read it from the environment",
  kind: "value",
  required: true,
} as const;

const MIGRATE_OPTIONS = defineOptions({
  url: URL_OPTION,
  to: {
    flags: "--to <version>",
    description: "stop at this schema version (default: the latest)",
    kind: "value",
  },
  json: { flags: "--json", description: "print the result as JSON", kind: "flag" },
});
const STATUS_OPTIONS = defineOptions({
  url: URL_OPTION,
  json: { flags: "--json", description: "print the result as JSON", kind: "flag" },
});

function targetOf(to: string | undefined): number {
  if (to === undefined) return SCHEMA_VERSION;
  const n = Number(to);
  if (!Number.isInteger(n) || n < 1 || n > SCHEMA_VERSION)
    throw new CliError("ERR_CLI_USAGE", `--to must be a schema version from 1 to ${SCHEMA_VERSION}`);
  return n;
}

async function runMigrate(ctx: CliContext, opts: OptionsOf<typeof MIGRATE_OPTIONS>): Promise<void> {
  const to = targetOf(opts.to);
  const pool = openPool({ kind: "postgres", url: opts.url, pool: { max: 1 } });
  try {
    const r = await migrate(pool, to);
    ctx.io.out(
      opts.json
        ? `${JSON.stringify(r)}\n`
        : r.applied.length === 0
          ? `schema is at version ${r.to}; nothing to apply\n`
          : `schema migrated from version ${r.from} to ${r.to} (applied ${r.applied.join(", ")})\n`,
    );
  } finally {
    await pool.end().catch(() => undefined);
  }
}

async function runStatus(ctx: CliContext, opts: OptionsOf<typeof STATUS_OPTIONS>): Promise<void> {
  const pool = openPool({ kind: "postgres", url: opts.url, pool: { max: 1 } });
  try {
    const version = await checkSchema(pool);
    ctx.io.out(
      opts.json ? `${JSON.stringify({ ok: true, version })}\n` : `schema version ${version}: current\n`,
    );
  } catch (err) {
    if (!hasErrorCode(err, "ERR_RUNTIME_STORE_SCHEMA")) throw err;
    ctx.io.out(
      opts.json
        ? `${JSON.stringify({ ok: false, expected: SCHEMA_VERSION, message: err.message })}\n`
        : `${err.message}\n`,
    );
    ctx.exitCode = EXIT.failed;
  } finally {
    await pool.end().catch(() => undefined);
  }
}

export function registerDb(program: Command, ctx: CliContext): void {
  const db = program.command("db").description(SUMMARY.db);
  addOptions(
    db.command("migrate").description("apply the schema migrations the shared PostgreSQL store lacks"),
    MIGRATE_OPTIONS,
  ).action((opts: OptionsOf<typeof MIGRATE_OPTIONS>) => runMigrate(ctx, opts));
  addOptions(
    db
      .command("status")
      .description("print the store's schema version; exit 1 when a sidecar would refuse it"),
    STATUS_OPTIONS,
  ).action((opts: OptionsOf<typeof STATUS_OPTIONS>) => runStatus(ctx, opts));
  registerDbPins(db, ctx);
}
