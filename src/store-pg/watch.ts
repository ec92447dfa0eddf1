// How a quarantine entered on one replica reaches the others' caches: the principal
// state store NOTIFYs `warden_principal_state` with the principal id in the transaction
// that saves it (delivered at COMMIT), and every node LISTENs on a dedicated connection
// and reloads that principal. A notification can be lost while a node's listening
// connection is down, so the watcher also polls the quarantined principals every
// `pollMs` (default 1 s) and after every reconnect: the stale window is one
// notification's delivery, or at most `pollMs` + one query when notifications fail
// (docs/distributed.md, consistency model). A reload can only add a quarantine, never
// lift one (context Principals.load), so a late or duplicate reload is harmless.
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

export class PrincipalWatcher {
  readonly #o: WatchOptions;
  readonly #poll: NodeJS.Timeout;
  #client: pg.Client | undefined;
  #connecting = false;
  #closed = false;

  constructor(options: WatchOptions) {
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
      if (n.channel === PRINCIPAL_CHANNEL && n.payload !== undefined) this.#o.onPrincipal(n.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${PRINCIPAL_CHANNEL}`);
      if (this.#closed) drop();
      else this.#client = client;
    } catch {
      drop();
    } finally {
      this.#connecting = false;
    }
  }

  /** Reconnects a lost listener and reloads every quarantined principal. */
  async #tick(): Promise<void> {
    if (this.#closed) return;
    await this.#connect();
    const c = this.#client;
    if (c === undefined) return;
    try {
      const r = await c.query<{ principal_id: string }>(
        "SELECT principal_id FROM principal_state WHERE record::jsonb ? 'quarantine'",
      );
      for (const row of r.rows) this.#o.onPrincipal(row.principal_id);
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
