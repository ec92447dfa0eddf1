// The statements of a journal append on PostgreSQL (journal-store.ts runs them), on one
// chain: its head is the chain's row in `journal_chains`, its entries carry its name.
//   insertStatement: the locked path's INSERT (inside BEGIN … head FOR UPDATE … COMMIT),
//     moving the head in the same statement when it carries the batch's last entry.
//   conditionalAppend: the whole append as ONE statement in its own implicit transaction:
//     the head moves only if it still is the head the batch was chained on
//     (`UPDATE … WHERE seq = expected AND hash = expected`, which waits for a concurrent
//     writer's row lock and then re-checks against its committed head), and the entries are
//     inserted only if it moved. It answers after COMMIT, so an acknowledged entry is
//     durable exactly as on the locked path; no lock is held across a client round trip.
//     Zero rows inserted means another node moved the head first: re-read and re-chain.
// Every value is a bound parameter; statements are named per shape (row count), so each
// connection parses and plans one once.
import type pg from "pg";
import { JOURNAL_COLUMNS, type JournalEntry, type SealedEntry } from "../journal/index.js";

/** Parameters per entry row: the journal's columns and the writing node. */
const PER_ROW = 11;

function rowValues(rows: readonly SealedEntry[], node: string, args: unknown[], cast: boolean): string {
  return rows
    .map(({ entry, bodyJson }) => {
      const at = args.length;
      args.push(entry.seq, entry.time, entry.type, entry.run_id, entry.trace_id, entry.prev_hash);
      args.push(entry.hash, entry.key_id, entry.signature, bodyJson, node);
      const ps = Array.from({ length: PER_ROW }, (_, j) => `$${at + j + 1}`);
      // In a VALUES list under SELECT nothing tells PostgreSQL the types: seq is bigint.
      if (cast) ps[0] = `${ps[0]}::bigint`;
      return `(${ps.join(", ")})`;
    })
    .join(", ");
}

/** Where a batch goes: the chain (its head row and entries) and the node writing it. */
export interface AppendTarget {
  chain: string;
  node: string;
}

/** The runs a batch acts for and the epoch the writer holds each at (runs.ts RunFence). */
export interface AppendFence {
  node: string;
  runs: readonly string[];
  epochs: readonly number[];
}

/**
 * The fence's rows, locked FOR SHARE for the statement (an adoption's UPDATE waits for it, or
 * it waits for the adoption and re-checks the row's new epoch): every run still this node's at
 * the epoch the writer holds.
 */
function fenceCte(f: AppendFence, args: unknown[]): string {
  args.push(f.runs, f.epochs, f.node);
  const n = args.length;
  return (
    `fenced AS (SELECT r.run_id FROM runs r JOIN unnest($${n - 2}::text[], $${n - 1}::int[]) AS f(run_id, epoch) ` +
    `ON r.run_id = f.run_id AND r.epoch = f.epoch WHERE r.node = $${n} FOR SHARE OF r)`
  );
}

/** The fence's check alone (after a conditional append stored nothing): the runs no longer held. */
export function fenceCheck(f: AppendFence): pg.QueryConfig {
  return {
    text:
      "SELECT f.run_id FROM unnest($1::text[], $2::int[]) AS f(run_id, epoch) WHERE NOT EXISTS " +
      "(SELECT 1 FROM runs r WHERE r.run_id = f.run_id AND r.epoch = f.epoch AND r.node = $3)",
    values: [f.runs, f.epochs, f.node],
  };
}

/** The locked path's fence: the rows still held, locked FOR SHARE until COMMIT. */
export function fenceLock(f: AppendFence): pg.QueryConfig {
  const args: unknown[] = [];
  const cte = fenceCte(f, args);
  return { text: `WITH ${cte} SELECT run_id FROM fenced`, values: args };
}

/** INSERT of up to a chunk of entries; with `moveHead`, the same statement moves the head to the last. */
export function insertStatement(
  rows: readonly SealedEntry[],
  to: AppendTarget,
  moveHead: boolean,
): pg.QueryConfig {
  const args: unknown[] = [to.chain];
  const values = rowValues(rows, to.node, args, true);
  const tail = rows.at(-1)?.entry;
  let head = "";
  if (moveHead && tail !== undefined) {
    args.push(tail.seq, tail.hash);
    head = `WITH moved AS (UPDATE journal_chains SET seq = $${args.length - 1}, hash = $${args.length} WHERE chain = $1) `;
  }
  return {
    name: `warden-journal-insert-${rows.length}${head === "" ? "" : "-head"}`,
    text: `${head}INSERT INTO journal_entries (${JOURNAL_COLUMNS}, node, chain) SELECT v.*, $1::text FROM (VALUES ${values}) AS v`,
    values: args,
  };
}

/** The batch appended in one statement if the head still is `last` (see the header). */
export function conditionalAppend(
  last: JournalEntry | null,
  rows: readonly SealedEntry[],
  to: AppendTarget,
  fence?: AppendFence,
): pg.QueryConfig {
  const args: unknown[] = [to.chain];
  const values = rowValues(rows, to.node, args, true);
  const tail = rows.at(-1)?.entry as JournalEntry;
  args.push(tail.seq, tail.hash, last?.seq ?? 0, last?.hash ?? null);
  const n = args.length;
  // Fenced: the head moves (and so anything is inserted) only if every run is still held.
  const fenced = fence === undefined ? "" : `${fenceCte(fence, args)}, `;
  const held = fence === undefined ? "" : ` AND (SELECT count(*) FROM fenced) = ${fence.runs.length}`;
  return {
    name: `warden-journal-append-${rows.length}${fence === undefined ? "" : `-f${fence.runs.length}`}`,
    text:
      `WITH ${fenced}moved AS (UPDATE journal_chains SET seq = $${n - 3}, hash = $${n - 2} ` +
      `WHERE chain = $1 AND seq = $${n - 1} AND hash IS NOT DISTINCT FROM $${n}${held} RETURNING 1) ` +
      `INSERT INTO journal_entries (${JOURNAL_COLUMNS}, node, chain) ` +
      `SELECT v.*, $1::text FROM (VALUES ${values}) AS v WHERE EXISTS (SELECT 1 FROM moved)`,
    values: args,
  };
}

/** A chain's head and the entry it names, in one read (no lock); no row: the chain does not exist yet. */
export const HEAD_AND_LAST =
  "SELECT h.seq AS head_seq, h.hash AS head_hash, " +
  JOURNAL_COLUMNS.split(", ")
    .map((c) => `e.${c}`)
    .join(", ") +
  " FROM journal_chains h LEFT JOIN journal_entries e ON e.chain = h.chain AND e.seq = h.seq WHERE h.chain = $1";

/** Creates a chain's head row (empty chain) unless it exists. */
export const CREATE_CHAIN =
  "INSERT INTO journal_chains (chain, seq, hash, node) VALUES ($1, 0, NULL, $2) ON CONFLICT (chain) DO NOTHING";
