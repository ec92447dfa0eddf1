// How a trust row changed on one replica reaches the others' cached tables (the APAE
// deployment table policy reads without I/O): PgTrustStore NOTIFYs `warden_trust` with
// `[truster, subject]` in the transaction that writes the row (delivered at COMMIT), and
// every node LISTENs on a dedicated connection and reloads that row. A notification is lost
// only while the listening connection is down: the watcher checks the connection every
// `pollMs` (default 1 s), asks for a full resync after every (re)connect, and every
// `resyncEvery` checks (default 30) as a safety net (not every poll: a resync reads every
// row of the table). The stale window is one notification's delivery plus one row read;
// when the connection broke, at most `pollMs` + a reconnect + one table read
// (docs/distributed.md, consistency model).
import pg from "pg";
import { TRUST_CHANNEL } from "./trust-store.js";

export interface TrustWatchOptions {
  url: string;
  ssl?: pg.ClientConfig["ssl"];
  /** A row changed on some node (may repeat, may be this node's own change). */
  onRow: (truster: string, subject: string) => void;
  /** Reload everything: notifications may have been missed (poll, reconnect). */
  onResync: () => void;
  pollMs?: number;
  /** Polls between two safety-net resyncs on a healthy connection (default 30). */
  resyncEvery?: number;
}

/** Parses a `warden_trust` payload; anything else is ignored (a resync covers it). */
export function parseTrustPayload(payload: string | undefined): [string, string] | undefined {
  if (payload === undefined) return undefined;
  try {
    const v: unknown = JSON.parse(payload);
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === "string" && typeof v[1] === "string")
      return [v[0], v[1]];
  } catch {
    // not ours
  }
  return undefined;
}

export class TrustWatcher {
  readonly #o: TrustWatchOptions;
  readonly #poll: NodeJS.Timeout;
  #client: pg.Client | undefined;
  #connecting = false;
  #closed = false;
  #ticks = 0;

  constructor(options: TrustWatchOptions) {
    this.#o = options;
    this.#poll = setInterval(() => void this.#tick(), options.pollMs ?? 1000);
    this.#poll.unref();
  }

  /** Connects the listener (resolves once it listens, or on the first failure: polling covers it). */
  async start(): Promise<void> {
    await this.#connect();
  }

  async #connect(): Promise<void> {
    if (this.#closed || this.#connecting || this.#client !== undefined) return;
    this.#connecting = true;
    const client = new pg.Client({
      connectionString: this.#o.url,
      ...(this.#o.ssl !== undefined ? { ssl: this.#o.ssl } : {}),
    });
    const drop = () => {
      if (this.#client === client) this.#client = undefined;
      void client.end().catch(() => undefined);
    };
    client.on("error", drop);
    client.on("end", drop);
    client.on("notification", (n) => {
      const pair = n.channel === TRUST_CHANNEL ? parseTrustPayload(n.payload) : undefined;
      if (pair !== undefined) this.#o.onRow(pair[0], pair[1]);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${TRUST_CHANNEL}`);
      if (this.#closed) drop();
      else {
        this.#client = client;
        // Whatever changed while nobody listened (before the first LISTEN, or while down).
        this.#o.onResync();
      }
    } catch {
      drop();
    } finally {
      this.#connecting = false;
    }
  }

  /** Reconnects a lost listener (which resyncs); now and then a safety-net resync. */
  async #tick(): Promise<void> {
    if (this.#closed) return;
    const had = this.#client !== undefined;
    await this.#connect();
    if (had && ++this.#ticks % (this.#o.resyncEvery ?? 30) === 0) this.#o.onResync();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#poll);
    const c = this.#client;
    this.#client = undefined;
    await c?.end().catch(() => undefined);
  }
}
