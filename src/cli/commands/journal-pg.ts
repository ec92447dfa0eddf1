// `warden journal verify|export --url URL`: the PostgreSQL journal of distributed mode. Its
// chains (one per replica, and the legacy global chain "") are verified together by default
// (verifyChains: each alone, names, checkpoint references); `--chain NAME` picks one chain,
// verified or exported alone, as a SQLite file or a JSONL export is. All chains are read in
// one REPEATABLE READ snapshot, and the report says what it verified up to (each chain's seq).
import { CliError } from "../../contracts/index.js";
import type { Keyring } from "../../crypto/index.js";
import type { JournalStore } from "../../journal/index.js";
import type { CliContext } from "../io.js";
import { type SeveralOptions, verifySeveral } from "./journal-chains.js";
import type { JournalFile } from "./journal-files.js";

const label = (chain: string) => (chain === "" ? "postgres: global chain" : `postgres: chain ${chain}`);

/** One chain of the database as a store that closes its own pool; a chain it does not hold is refused. */
export async function openChainStore(url: string, chain: string): Promise<JournalStore> {
  const { chainNames, openPool, PgJournalStore } = await import("../../store-pg/index.js");
  const pool = openPool({ kind: "postgres", url, pool: { max: 2 } });
  try {
    const names = await chainNames(pool);
    if (!names.includes(chain))
      throw new CliError(
        "ERR_CLI_INPUT",
        `the journal has no chain ${JSON.stringify(chain)}; its chains: ${names.map((n) => JSON.stringify(n)).join(", ") || "none"}`,
      );
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
  return new PgJournalStore(pool, { chain });
}

/** Every chain of the database, verified together. */
export async function verifyDatabase(
  url: string,
  keyring: Keyring,
  o: SeveralOptions,
  ctx: CliContext,
): Promise<void> {
  const { chainSnapshot, openPool } = await import("../../store-pg/index.js");
  const pool = openPool({ kind: "postgres", url, pool: { max: 2 } });
  try {
    // One REPEATABLE READ snapshot for every chain: a serving cluster's checkpoints are
    // checked against the same moment of the chains they name (no false alarm).
    const snap = await chainSnapshot(pool);
    try {
      const files: JournalFile[] = snap.inputs.map(({ name: chain, open }) => {
        const store = open();
        return {
          path: label(chain),
          name: chain,
          store,
          source: () => store,
          entries: () => store.entries(),
          size: () => store.count(),
        };
      });
      const upTo = snap.heads.map((h) => ({ chain: h.chain, seq: h.seq }));
      await verifySeveral(files, keyring, { ...o, snapshot: { takenAt: snap.takenAt, upTo } }, ctx);
    } finally {
      await snap.release();
    }
  } finally {
    await pool.end().catch(() => undefined);
  }
}
