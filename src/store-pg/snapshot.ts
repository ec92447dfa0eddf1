// `warden journal verify --url` on a serving cluster (issue 36): every chain is read in ONE
// consistent snapshot (a REPEATABLE READ, READ ONLY transaction on one connection), so a
// checkpoint on one chain that names another chain's head is never checked against a read of
// that chain taken before the head moved (a false `checkpoint_unmatched`). The snapshot's
// heads are what the verification covers: "verified up to" each chain's seq as of `takenAt`.
import type pg from "pg";
import { type ChainHead, chainNames, listChains, type PgChainInput } from "./checkpoint.js";
import { storeError } from "./connect.js";
import { PgJournalStore } from "./journal-store.js";

export interface ChainSnapshot {
  /** The chains as verifyChains takes them, every read through the snapshot's connection. */
  inputs: PgChainInput[];
  /** Every chain's committed head in the snapshot: what a verification covers. */
  heads: ChainHead[];
  /** The database's clock when the snapshot was taken (ISO 8601). */
  takenAt: string;
  /** Ends the snapshot (ROLLBACK: it wrote nothing) and returns the connection. */
  release(): Promise<void>;
}

/** Opens a snapshot of every chain; `release()` it when done. */
export async function chainSnapshot(pool: pg.Pool): Promise<ChainSnapshot> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw storeError("journal snapshot", err);
  }
  try {
    // The snapshot is taken by the transaction's first statement; it holds no lock. A long
    // verification may sit between reads (hashing): the store's idle timeout is lifted here.
    await client.query(
      "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL idle_in_transaction_session_timeout = 0",
    );
    const at = await client.query<{ now: string }>(
      "SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') AS now",
    );
    // The stores only read (query); one connection serves them all, in order.
    const reader = { query: client.query.bind(client) } as unknown as pg.Pool;
    const names = await chainNames(reader);
    const heads = await listChains(reader);
    return {
      inputs: names.map((chain) => ({
        name: chain,
        open: () => new PgJournalStore(reader, { chain, ownsPool: false }),
      })),
      heads,
      takenAt: at.rows[0]?.now ?? "",
      async release() {
        await client.query("ROLLBACK").catch(() => undefined);
        client.release();
      },
    };
  } catch (err) {
    client.release(true);
    throw storeError("journal snapshot", err);
  }
}
