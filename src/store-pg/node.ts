// One replica's handle on the shared store: the pool, the start check, and the stores the
// composition root wires (src/runtime compose.ts, when the configuration has
// `store: {kind: postgres}`). Opening checks the schema version first and refuses an
// unmigrated, older or unknown one (ERR_RUNTIME_STORE_SCHEMA); nothing is migrated here.
import { hostname } from "node:os";
import type pg from "pg";
import { openPool, type PgStoreConfig, resolveUrl, sslOf } from "./connect.js";
import { PgJournalStore } from "./journal-store.js";
import { PgBudgetLedger } from "./ledger.js";
import { checkSchema } from "./migrations.js";
import { PgNonceStore, PgPrincipalStateStore } from "./state-stores.js";
import { PgTrustStore } from "./trust-store.js";
import { TrustWatcher, type TrustWatchOptions } from "./trust-watch.js";
import { PrincipalWatcher } from "./watch.js";

export interface PgNodeConfig extends PgStoreConfig {
  /** This replica's name in the journal's `node` column (default host:pid). */
  node?: string;
}

export interface PgNode {
  readonly pool: pg.Pool;
  readonly node: string;
  readonly journal: PgJournalStore;
  readonly principals: PgPrincipalStateStore;
  /** Capability use counts (and budgets where a caller drives an async ledger). */
  readonly ledger: PgBudgetLedger;
  readonly nonces: PgNonceStore;
  readonly trust: PgTrustStore;
  /** Calls `onPrincipal` for every principal whose state another node changed (LISTEN + polling). */
  watchPrincipals(onPrincipal: (principalId: string) => void, pollMs?: number): Promise<PrincipalWatcher>;
  /** Calls `onRow` for every trust row any node wrote (LISTEN), `onResync` every `pollMs`. */
  watchTrust(
    o: Pick<TrustWatchOptions, "onRow" | "onResync" | "pollMs" | "resyncEvery">,
  ): Promise<TrustWatcher>;
  close(): Promise<void>;
}

/** Opens the pool and checks the schema; throws ERR_RUNTIME_STORE_SCHEMA / _UNAVAILABLE. */
export async function openPgNode(
  config: PgNodeConfig,
  env: NodeJS.ProcessEnv = process.env,
): Promise<PgNode> {
  const pool = openPool(config, env);
  try {
    await checkSchema(pool);
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
  const node = config.node ?? `${hostname()}:${process.pid}`;
  const watchers: { close(): Promise<void> }[] = [];
  let closing: Promise<void> | undefined;
  return {
    pool,
    node,
    journal: new PgJournalStore(pool, { node, ownsPool: false }),
    principals: new PgPrincipalStateStore(pool),
    ledger: new PgBudgetLedger(pool),
    nonces: new PgNonceStore(pool),
    trust: new PgTrustStore(pool),
    async watchPrincipals(onPrincipal, pollMs) {
      const w = new PrincipalWatcher({
        url: resolveUrl(config.url, env),
        ssl: sslOf(config.tls),
        onPrincipal,
        ...(pollMs !== undefined ? { pollMs } : {}),
      });
      watchers.push(w);
      await w.start();
      return w;
    },
    async watchTrust(o) {
      const w = new TrustWatcher({ url: resolveUrl(config.url, env), ssl: sslOf(config.tls), ...o });
      watchers.push(w);
      await w.start();
      return w;
    },
    close() {
      closing ??= (async () => {
        for (const w of watchers) await w.close();
        await pool.end().catch(() => undefined);
      })();
      return closing;
    },
  };
}
