// Cross-chain checkpoints (distributed mode with one chain per replica; docs/distributed.md,
// "The journal"). A replica's chain starts with a `warden.journal.checkpoint` naming the
// chain, and every `everyMs` the replica appends one more to its own chain naming the
// committed heads {chain, seq, hash} of the OTHER chains that moved since its previous
// checkpoint (nothing when none moved, or moved only by checkpoints: an idle fleet stops
// checkpointing), and a last one when it stops. Each such entry is
// signed and chained like any other, so it proves those chains held those entries before it:
// a chain truncated, deleted or rewritten afterwards no longer matches and `warden journal
// verify --url` (src/journal chains.ts) fails. Heads are read from `journal_chains`, which
// moves only in a committed append: a checkpoint never names an entry that was not durable.
import type pg from "pg";
import {
  CHECKPOINT,
  type ChainInput,
  type CheckpointBody,
  type Journal,
  MAX_CHECKPOINT_HEADS,
} from "../journal/index.js";
import { PgJournalStore } from "./journal-store.js";

/** A chain's committed head as `journal_chains` holds it. */
export interface ChainHead {
  chain: string;
  seq: number;
  hash: string | null;
  /** The replica that created the chain. */
  node: string;
}

/** Every chain's head, by name (the global chain is ""). */
export async function listChains(pool: pg.Pool): Promise<ChainHead[]> {
  const r = await pool.query<{ chain: string; seq: string; hash: string | null; node: string }>(
    "SELECT chain, seq, hash, node FROM journal_chains ORDER BY chain",
  );
  return r.rows.map((x) => ({ chain: x.chain, seq: Number(x.seq), hash: x.hash, node: x.node }));
}

/** Every chain's name: those with a head row and those with entries but no head row (a deleted head row hides nothing). */
export async function chainNames(pool: pg.Pool): Promise<string[]> {
  const r = await pool.query<{ chain: string }>(
    "SELECT chain FROM journal_chains UNION SELECT DISTINCT chain FROM journal_entries ORDER BY chain",
  );
  return r.rows.map((x) => x.chain);
}

/** A chain of the database as `verifyChains` takes it (a ChainInput), its store typed. */
export interface PgChainInput extends ChainInput {
  name: string;
  open(): PgJournalStore;
}

/**
 * Every chain of the database as an input of `verifyChains` (src/journal chains.ts): what
 * `warden journal verify --url` checks. The stores read through `pool` (not closed by them).
 */
export async function chainInputs(pool: pg.Pool): Promise<PgChainInput[]> {
  return (await chainNames(pool)).map((chain) => ({
    name: chain,
    open: () => new PgJournalStore(pool, { chain, ownsPool: false }),
  }));
}

export interface CheckpointerOptions {
  pool: pg.Pool;
  journal: Pick<Journal, "append">;
  /** This replica's chain (never ""). */
  chain: string;
  /** Period of the checkpoints (ms). */
  everyMs: number;
  /** Called with a periodic checkpoint's failure (the next tick tries again); default: a process warning. */
  onError?: (err: unknown) => void;
}

type Head = CheckpointBody["heads"][number];

export class ChainCheckpointer {
  readonly #o: CheckpointerOptions;
  /** The heads named so far, by chain: only a moved head is named again. */
  readonly #named = new Map<string, string>();
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<number> | undefined;
  #stopped = false;

  constructor(o: CheckpointerOptions) {
    this.#o = o;
  }

  /** The opening checkpoint (every head there is), then one every `everyMs`. */
  async start(): Promise<void> {
    await this.checkpoint(true);
    const onError =
      this.#o.onError ??
      ((err: unknown) =>
        process.emitWarning(
          `journal checkpoint of chain ${this.#o.chain} failed: ${(err as Error).message}`,
          {
            code: "WARDEN_JOURNAL_CHECKPOINT",
          },
        ));
    this.#timer = setInterval(() => {
      this.checkpoint().catch(onError);
    }, this.#o.everyMs);
    this.#timer.unref();
  }

  /**
   * Appends the checkpoint entries for the heads that moved; resolves with how many it
   * appended (0 when nothing moved and `always` is false). Never two at once.
   */
  checkpoint(always = false): Promise<number> {
    const prev = this.#running ?? Promise.resolve(0);
    const next = prev.catch(() => 0).then(() => this.#write(always));
    this.#running = next;
    return next;
  }

  async #write(always: boolean): Promise<number> {
    const moved: Head[] = [];
    for (const h of await listChains(this.#o.pool)) {
      if (h.chain === this.#o.chain || h.seq === 0 || h.hash === null) continue;
      const key = `${h.seq}:${h.hash}`;
      if (this.#named.get(h.chain) === key) continue;
      moved.push({ chain: h.chain, seq: h.seq, hash: h.hash as Head["hash"] });
    }
    if (moved.length === 0 && !always) return 0;
    await this.#dropCheckpointOnly(moved);
    if (moved.length === 0 && !always) return 0;
    let written = 0;
    for (let i = 0; i === 0 || i < moved.length; i += MAX_CHECKPOINT_HEADS) {
      const heads = moved.slice(i, i + MAX_CHECKPOINT_HEADS);
      await this.#o.journal.append({ type: CHECKPOINT, body: { chain: this.#o.chain, heads } });
      for (const h of heads) this.#named.set(h.chain, `${h.seq}:${h.hash}`);
      written++;
    }
    return written;
  }

  /**
   * Leaves out the chains that moved only by checkpoints since this replica last named them:
   * naming them would move this chain, which the other replica would name in turn, forever
   * (an idle fleet grew by a checkpoint per chain and period). A chain never named yet is
   * always named. What such a tail holds is checkpoints only; it is named with the next entry
   * that is not one.
   */
  async #dropCheckpointOnly(moved: Head[]): Promise<void> {
    const known = moved.filter((h) => this.#named.has(h.chain));
    if (known.length === 0) return;
    const after = known.map((h) => Number((this.#named.get(h.chain) as string).split(":")[0]));
    const r = await this.#o.pool.query<{ chain: string }>(
      "SELECT f.chain FROM unnest($1::text[], $2::bigint[]) AS f(chain, after) WHERE EXISTS " +
        "(SELECT 1 FROM journal_entries e WHERE e.chain = f.chain AND e.seq > f.after AND e.type <> $3)",
      [known.map((h) => h.chain), after, CHECKPOINT],
    );
    const real = new Set(r.rows.map((x) => x.chain));
    for (let i = moved.length - 1; i >= 0; i--) {
      const h = moved[i] as Head;
      if (this.#named.has(h.chain) && !real.has(h.chain)) moved.splice(i, 1);
    }
  }

  /** Stops the period; with `final`, appends a last checkpoint (what moved) first. */
  async stop(final: boolean): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    clearInterval(this.#timer);
    if (final) await this.checkpoint();
    else await this.#running?.catch(() => 0);
  }
}
