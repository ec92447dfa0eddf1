// Where trust tables live. The engine reads and changes a row only through `update`, which
// a store runs atomically: in memory and in SQLite the callback is synchronous inside one
// transaction; a PostgreSQL store runs it between a read of the row and a conditional write
// (retried from the read when another node wrote first), so two sidecars applying events to
// the same (truster, subject) never lose one. The callback must be pure: it may run again.
// Rows read back are validated: a row that does not parse is a fault
// (ERR_TRUST_STORE_CORRUPT), never a fresh score.
import { z } from "zod";
import { TrustError } from "../contracts/index.js";
import type { TrustRow } from "./table.js";

export interface RowUpdate<T> {
  /** The row to write; omitted when nothing changes (a refusal, a read). */
  row?: TrustRow;
  result: T;
}

export interface TrustStore {
  get(truster: string, subject: string): Promise<TrustRow | undefined>;
  /** Reads the row, calls `fn` (synchronous, pure, may throw to abort; may be called again), writes what it returns, atomically. */
  update<T>(truster: string, subject: string, fn: (row: TrustRow | undefined) => RowUpdate<T>): Promise<T>;
  /** Every row, or one truster's, ordered by truster then subject. */
  list(truster?: string): Promise<TrustRow[]>;
  /** Quarantined rows whose quarantine ends at or before `now`, soonest first. */
  dueQuarantines(now: number): Promise<TrustRow[]>;
  /** Records that `peer` was sent a trust assertion about `subject` (quarantine broadcast list). */
  addRecipient(subject: string, peer: string): Promise<void>;
  /** The peers that received trust assertions about `subject`, sorted. */
  recipients(subject: string): Promise<string[]>;
  close(): Promise<void>;
}

const Id = z.string().min(1).max(1024);
const Ms = z.number().int().min(0);
const Score = z.number().min(0).max(1);

export const TrustRowSchema = z.strictObject({
  truster: Id,
  subject: Id,
  score: Score,
  interactions: z.number().int().min(0),
  lastInteraction: Ms.nullable(),
  anchor: Ms,
  status: z.enum(["active", "quarantined"]),
  quarantineUntil: Ms.nullable(),
  quarantineCount: z.number().int().min(0),
  gainWindowStart: Ms.nullable(),
  gainInWindow: Score,
  propagatedHops: z.number().int().min(0).nullable(),
});

/** Validates a row read from storage. */
export function parseTrustRow(value: unknown, where: string): TrustRow {
  const res = TrustRowSchema.safeParse(value);
  if (!res.success || (res.data.status === "quarantined") !== (res.data.quarantineUntil !== null)) {
    throw new TrustError("ERR_TRUST_STORE_CORRUPT", `trust row ${where} is unreadable`);
  }
  return res.data;
}

const keyOf = (truster: string, subject: string): string => JSON.stringify([truster, subject]);

function byKey(a: TrustRow, b: TrustRow): number {
  if (a.truster !== b.truster) return a.truster < b.truster ? -1 : 1;
  return a.subject < b.subject ? -1 : a.subject > b.subject ? 1 : 0;
}

/** Process-local tables (tests, `warden trust simulate`, in-memory runtimes). */
export class MemoryTrustStore implements TrustStore {
  readonly #rows = new Map<string, TrustRow>();

  async get(truster: string, subject: string): Promise<TrustRow | undefined> {
    const row = this.#rows.get(keyOf(truster, subject));
    return row === undefined ? undefined : { ...row };
  }

  async update<T>(
    truster: string,
    subject: string,
    fn: (row: TrustRow | undefined) => RowUpdate<T>,
  ): Promise<T> {
    const current = this.#rows.get(keyOf(truster, subject));
    const out = fn(current === undefined ? undefined : { ...current });
    if (out.row !== undefined) this.#rows.set(keyOf(truster, subject), { ...out.row });
    return out.result;
  }

  async list(truster?: string): Promise<TrustRow[]> {
    return [...this.#rows.values()]
      .filter((r) => truster === undefined || r.truster === truster)
      .map((r) => ({ ...r }))
      .sort(byKey);
  }

  async dueQuarantines(now: number): Promise<TrustRow[]> {
    return [...this.#rows.values()]
      .filter((r) => r.status === "quarantined" && r.quarantineUntil !== null && r.quarantineUntil <= now)
      .map((r) => ({ ...r }))
      .sort((a, b) => (a.quarantineUntil as number) - (b.quarantineUntil as number) || byKey(a, b));
  }

  readonly #recipients = new Map<string, Set<string>>();

  async addRecipient(subject: string, peer: string): Promise<void> {
    const set = this.#recipients.get(subject) ?? new Set<string>();
    set.add(peer);
    this.#recipients.set(subject, set);
  }

  async recipients(subject: string): Promise<string[]> {
    return [...(this.#recipients.get(subject) ?? [])].sort();
  }

  async close(): Promise<void> {}
}
