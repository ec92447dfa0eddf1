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
import type pg from "pg";
import { TRUST_CHANNEL } from "./trust-store.js";
import { PgListener } from "./watch.js";

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

/** Trust rows changed on any node reload here (a NOTIFY; a full resync after every (re)connect and every `resyncEvery` polls). */
export class TrustWatcher {
  readonly #listener: PgListener;
  #ticks = 0;

  constructor(options: TrustWatchOptions) {
    const every = options.resyncEvery ?? 30;
    this.#listener = new PgListener({
      url: options.url,
      ...(options.ssl !== undefined ? { ssl: options.ssl } : {}),
      channel: TRUST_CHANNEL,
      onPayload: (payload) => {
        const pair = parseTrustPayload(payload);
        if (pair !== undefined) options.onRow(pair[0], pair[1]);
      },
      // Whatever changed while nobody listened (before the first LISTEN, or while down).
      onConnect: options.onResync,
      onTick: async () => {
        if (++this.#ticks % every === 0) options.onResync();
      },
      ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
    });
  }

  /** Connects the listener (resolves once it listens, or on the first failure: polling covers it). */
  start(): Promise<void> {
    return this.#listener.start();
  }

  close(): Promise<void> {
    return this.#listener.close();
  }
}
