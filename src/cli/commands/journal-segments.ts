// `warden journal reindex|migrate`: the segment journal's derived index rebuilt from
// its segments, and a SQLite journal of the earlier format turned into a segment
// journal — verified before (the SQLite file) and after (the new segments, before
// they are put in place), so a migration never carries a broken chain over silently.
// On a segment journal, migrate upgrades its format-1 segments to format 2, verified
// the same way (docs/journal.md §8.7).
import { existsSync } from "node:fs";
import type { Command } from "commander";
import { CliError } from "../../contracts/index.js";
import { Keyring, loadPublicKeyFile } from "../../crypto/index.js";
import {
  isLegacyJournal,
  migrateToSegments,
  SegmentJournalStore,
  SqliteJournalStore,
  segmentDir,
  segmentRecords,
  upgradeSegments,
  type VerifyReport,
  verifyJournal,
} from "../../journal/index.js";
import { type CliContext, EXIT } from "../io.js";
import { addOptions, defineOptions, type OptionsOf } from "../options.js";

const REINDEX_OPTIONS = defineOptions({
  db: { flags: "--db <file>", description: "the journal (its index file)", kind: "value", required: true },
  json: { flags: "--json", description: "print the result as JSON", kind: "flag" },
});
const MIGRATE_OPTIONS = defineOptions({
  db: {
    flags: "--db <file>",
    description: "the SQLite journal to migrate, or a segment journal (its index file) to upgrade",
    kind: "value",
    required: true,
  },
  keys: {
    flags: "--keys <files...>",
    description: "trusted public key files (PEM or JWK); the key of seq 1 must be among them",
    kind: "values",
  },
  json: { flags: "--json", description: "print the result as JSON", kind: "flag" },
});
type ReindexOpts = OptionsOf<typeof REINDEX_OPTIONS>;
type MigrateOpts = OptionsOf<typeof MIGRATE_OPTIONS>;

function failure(r: VerifyReport): string {
  return r.ok ? "" : `entry ${r.failure.seq}: ${r.failure.reason}: ${r.failure.message}`;
}

function keyringOf(opts: MigrateOpts): Keyring {
  if (opts.keys === undefined || opts.keys.length === 0) {
    throw new CliError(
      "ERR_CLI_USAGE",
      "migration verifies the journal: give its public key (--keys FILE...)",
    );
  }
  return new Keyring(opts.keys.map((f) => loadPublicKeyFile(f)));
}

/** A segment journal: its format-1 segments upgraded to format 2, verified before and after. */
async function upgrade(ctx: CliContext, opts: MigrateOpts, keyring: Keyring): Promise<void> {
  const dir = segmentDir(opts.db);
  const before = await verifyJournal(segmentRecords(dir), keyring);
  if (!before.ok) {
    ctx.io.err(`not migrated: the journal does not verify at ${failure(before)}\n`);
    ctx.exitCode = EXIT.failed;
    return;
  }
  const upgraded = await upgradeSegments(dir, {
    check: async (staged) => {
      const after = await verifyJournal(segmentRecords(staged), keyring);
      if (!(after.ok && after.checked >= before.checked && after.head !== null)) {
        throw new CliError(
          "ERR_CLI_INPUT",
          `not migrated: the upgraded segments do not verify (${failure(after)})`,
        );
      }
    },
  });
  const out = { upgraded, format: 2, head: before.head };
  ctx.io.out(
    opts.json
      ? `${JSON.stringify(out, null, 2)}\n`
      : upgraded.length === 0
        ? `every segment of ${dir} is of format 2: nothing to migrate\n`
        : `upgraded ${upgraded.length} segment(s) of ${dir} to format 2 (verified before and after)\n`,
  );
}

async function migrate(ctx: CliContext, opts: MigrateOpts): Promise<void> {
  if (existsSync(segmentDir(opts.db))) return upgrade(ctx, opts, keyringOf(opts));
  if (!isLegacyJournal(opts.db)) {
    throw new CliError("ERR_CLI_INPUT", `${opts.db} is not a SQLite journal of the earlier format`);
  }
  const keyring = keyringOf(opts);
  const old = SqliteJournalStore.open(opts.db, { readonly: true });
  let before: VerifyReport;
  try {
    before = await verifyJournal(old, keyring);
  } finally {
    await old.close();
  }
  if (!before.ok) {
    ctx.io.err(`not migrated: the journal does not verify at ${failure(before)}\n`);
    ctx.exitCode = EXIT.failed;
    return;
  }
  let after: VerifyReport | undefined;
  const entries = await migrateToSegments(opts.db, {
    check: async (dir) => {
      after = await verifyJournal(segmentRecords(dir), keyring);
      const same = after.ok && after.checked === before.checked && after.head?.hash === before.head?.hash;
      if (!same)
        throw new CliError(
          "ERR_CLI_INPUT",
          `not migrated: the segments do not verify the same (${failure(after)})`,
        );
    },
  });
  const out = { migrated: entries, segments: segmentDir(opts.db), head: after?.head ?? null };
  ctx.io.out(
    opts.json
      ? `${JSON.stringify(out, null, 2)}\n`
      : `migrated ${entries} entries to ${out.segments} (verified before and after` +
          `${out.head ? `, head seq ${out.head.seq} ${out.head.hash}` : ""})\n`,
  );
}

export function registerSegmentCommands(journal: Command, ctx: CliContext): void {
  addOptions(
    journal.command("reindex").description("rebuild a segment journal's SQLite index from its segments"),
    REINDEX_OPTIONS,
  ).action(async (opts: ReindexOpts) => {
    const store = SegmentJournalStore.open(opts.db, { readonly: true });
    try {
      const n = await store.reindex();
      ctx.io.out(opts.json ? `${JSON.stringify({ indexed: n })}\n` : `index rebuilt: ${n} entries\n`);
    } finally {
      await store.close();
    }
  });
  addOptions(
    journal
      .command("migrate")
      .description(
        "turn a SQLite journal of the earlier format into a segment journal, or upgrade a segment journal's format-1 segments to format 2 (verified before and after)",
      ),
    MIGRATE_OPTIONS,
  ).action((opts: MigrateOpts) => migrate(ctx, opts));
}
