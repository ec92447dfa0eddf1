// How a quarantine entered on one replica reaches the others' caches: the principal
// state store NOTIFYs `warden_principal_state` with the principal id in the transaction
// that saves it (delivered at COMMIT), and every node LISTENs on a dedicated connection
// and reloads that principal. A notification can be lost while a node's listening
// connection is down, so the watcher also polls the quarantined principals every
// `pollMs` (default 1 s) and after every reconnect: the stale window is one
// notification's delivery, or at most `pollMs` + one query when notifications fail
// (docs/distributed.md, consistency model). A reload can only add a quarantine, never
// lift one (context Principals.load), so a late or duplicate reload is harmless.
// PgListener is the mechanism for any channel (the shared approval queue listens too).
import pg from "pg";

export const PRINCIPAL_CHANNEL = "warden_principal_state";

export interface WatchOptions {
  /** Connection string of the shared database. */
  url: string;
  ssl?: pg.ClientConfig["ssl"];
  /** Called with every principal whose state changed on any node (may repeat). */
  onPrincipal: (principalId: string) => void;
  pollMs?: number;
}

export interface ListenOptions {
  url: string;
  ssl?: pg.ClientConfig["ssl"];
  channel: string;
  /** Called with every notification's payload on `channel` (may repeat, may be lost). */
  onPayload: (payload: string) => void;
  /** Runs every `pollMs` on the listening connection: the catch-up for lost notifications. */
  onTick?: (c: pg.Client) => Promise<void>;
  /** Runs after every (re)connect, once LISTEN is in place: what changed while nobody listened. */
  onConnect?: () => void;
  pollMs?: number;
}

/** A principal's quarantine saved on any node reloads here (a NOTIFY, or the poll of quarantined principals). */
export class PrincipalWatcher {
  readonly #listener: PgListener;

  constructor(options: WatchOptions) {
    this.#listener = new PgListener({
      url: options.url,
      ...(options.ssl !== undefined ? { ssl: options.ssl } : {}),
      channel: PRINCIPAL_CHANNEL,
      onPayload: options.onPrincipal,
      ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
      async onTick(c) {
        const r = await c.query<{ principal_id: string }>(
          "SELECT principal_id FROM principal_state WHERE record::jsonb ? 'quarantine'",
        );
        for (const row of r.rows) options.onPrincipal(row.principal_id);
      },
    });
  }

  start(): Promise<void> {
    return this.#listener.start();
  }

  close(): Promise<void> {
    return this.#listener.close();
  }
}

/** LISTEN on one channel over a dedicated connection, reconnected by a poll that also catches up. */
export class PgListener {
  readonly #o: ListenOptions;
  readonly #poll: NodeJS.Timeout;
  #client: pg.Client | undefined;
  #connecting = false;
  #closed = false;

  constructor(options: ListenOptions) {
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
      if (n.channel === this.#o.channel && n.payload !== undefined) this.#o.onPayload(n.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.#o.channel}`);
      if (this.#closed) drop();
      else {
        this.#client = client;
        this.#o.onConnect?.();
      }
    } catch {
      drop();
    } finally {
      this.#connecting = false;
    }
  }

  /** Reconnects a lost listener and runs the catch-up. */
  async #tick(): Promise<void> {
    if (this.#closed) return;
    await this.#connect();
    const c = this.#client;
    if (c === undefined) return;
    try {
      await this.#o.onTick?.(c);
    } catch {
      // The connection broke: the next tick reconnects.
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#poll);
    const c = this.#client;
    this.#client = undefined;
    await c?.end().catch(() => undefined);
  }
}
