// One replica's handle on the shared store: the pool, the start check, and the stores the
// composition root wires (src/runtime compose.ts, when the configuration has
// `store: {kind: postgres}`). Opening checks the schema version first and refuses an
// unmigrated, older or unknown one (ERR_RUNTIME_STORE_SCHEMA); nothing is migrated here.
import { hostname } from "node:os";
import type pg from "pg";
import { RuntimeError } from "../contracts/index.js";
import type { Journal } from "../journal/index.js";
import { ChainCheckpointer } from "./checkpoint.js";
import { openPool, type PgStoreConfig, resolveUrl, sslOf } from "./connect.js";
import { PgConsoleKeys } from "./console-keys.js";
import { PgEctIndex } from "./ect-index.js";
import { PgIdempotencyKeys } from "./idempotency.js";
import { PgInboxStore } from "./inbox-store.js";
import { PgJournalStore } from "./journal-store.js";
import { PgKeyPins } from "./key-pins.js";
import { PgBudgetLedger } from "./ledger.js";
import { PgMcpPins } from "./mcp-pins.js";
import { checkSchema } from "./migrations.js";
import { PgPrincipalTaintStore } from "./principal-taint.js";
import { PgRevocationFloors } from "./revocation-floors.js";
import { PgRunRegistry } from "./runs.js";
import { PgNonceStore, PgPrincipalStateStore } from "./state-stores.js";
import { PgTofuPins } from "./tofu-pins.js";
import { PgTrustStore } from "./trust-store.js";
import { TrustWatcher, type TrustWatchOptions } from "./trust-watch.js";
import { PgListener, PrincipalWatcher } from "./watch.js";

export interface PgNodeConfig extends PgStoreConfig {
  /** This replica's name in the journal's `node` column (default host:pid). */
  node?: string;
  /** Run leases: how long a renewal keeps a run this replica's, and the clock margin (runs.ts). */
  runs?: { leaseMs?: number; marginMs?: number };
  /** Polling period of the shared approval and deferred queues when notifications are lost (default 1 s). */
  approvalPollMs?: number;
  /**
   * The journal's chains: `per-node` (default) — this replica appends to its own chain, named
   * by `node`, with cross-chain checkpoints every `checkpointMs` (default 5000); `global` — one
   * chain every replica extends (appends serialise on its head).
   */
  journal?: { chains?: "per-node" | "global"; checkpointMs?: number };
}

export interface PgNode {
  readonly pool: pg.Pool;
  readonly node: string;
  /** `approvalPollMs` as configured (the shared approval and deferred queues' catch-up period). */
  readonly approvalPollMs: number | undefined;
  readonly journal: PgJournalStore;
  /**
   * Per-node chains: starts this replica's checkpoints on the journal over `journal` (the
   * opening checkpoint is appended before this resolves: call it before any other append).
   * Undefined with the global chain.
   */
  startCheckpoints?(
    journal: Pick<Journal, "append">,
    onError?: (err: unknown) => void,
  ): Promise<ChainCheckpointer>;
  readonly principals: PgPrincipalStateStore;
  /** Taint carried at the principal (issue 37). */
  readonly taint: PgPrincipalTaintStore;
  /** Waiting inter-agent messages (issue 37). */
  readonly inbox: PgInboxStore;
  /** The console's browser approval keys and their revocations (issue 37). */
  readonly consoleKeys: PgConsoleKeys;
  /** Capability use counts (and budgets where a caller drives an async ledger). */
  readonly ledger: PgBudgetLedger;
  readonly nonces: PgNonceStore;
  readonly trust: PgTrustStore;
  /** The runs registry: principal binding, owner node and lease of every run. */
  readonly runs: PgRunRegistry;
  /** AgentPin TOFU pins: the first pin of a domain wins on every replica. */
  readonly pins: PgKeyPins;
  /** MCP tool definition pins: the first pin of a tool wins on every replica. */
  readonly mcpPins: PgMcpPins;
  /** SchemaPin contract-key pins and hook source pins: the first pin wins on every replica. */
  readonly tofuPins: PgTofuPins;
  /** The L3 ECT ledger's jti index: a jti is recorded once across replicas. */
  readonly ects: PgEctIndex;
  /** The acting routes' Idempotency-Keys and their outcomes, shared by every replica. */
  readonly idempotency: PgIdempotencyKeys;
  /** APAE revocation floors: written before the answer that caused them, read by every token check. */
  readonly revocations: PgRevocationFloors;
  /** Calls `onPrincipal` for every principal whose state another node changed (LISTEN + polling). */
  watchPrincipals(onPrincipal: (principalId: string) => void, pollMs?: number): Promise<PrincipalWatcher>;
  /** LISTENs on `channel` over a dedicated connection (reconnected by its poll), closed with the node. */
  listen(channel: string, onPayload: (payload: string) => void): Promise<PgListener>;
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
  let runs: PgRunRegistry;
  try {
    runs = new PgRunRegistry(pool, { node, ...config.runs });
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw new RuntimeError("ERR_RUNTIME_CONFIG_INVALID", `store.runs: ${(err as Error).message}`);
  }
  const perNode = config.journal?.chains !== "global";
  return {
    pool,
    node,
    approvalPollMs: config.approvalPollMs,
    journal: new PgJournalStore(pool, {
      node,
      chain: perNode ? node : "",
      ownsPool: false,
      // Every batch that acts for a run commits only while this replica owns the run at
      // the epoch it holds (docs/distributed.md, "Fenced commits").
      fence: (ids) => runs.fence(ids),
      onFenced: (ids) => runs.lost(ids),
    }),
    ...(perNode
      ? {
          async startCheckpoints(journal, onError) {
            const c = new ChainCheckpointer({
              pool,
              journal,
              chain: node,
              everyMs: config.journal?.checkpointMs ?? 5000,
              ...(onError !== undefined ? { onError } : {}),
            });
            await c.start();
            return c;
          },
        }
      : {}),
    principals: new PgPrincipalStateStore(pool),
    taint: new PgPrincipalTaintStore(pool),
    inbox: new PgInboxStore(pool),
    consoleKeys: new PgConsoleKeys(pool),
    ledger: new PgBudgetLedger(pool),
    nonces: new PgNonceStore(pool),
    trust: new PgTrustStore(pool),
    runs,
    pins: new PgKeyPins(pool),
    mcpPins: new PgMcpPins(pool),
    tofuPins: new PgTofuPins(pool),
    ects: new PgEctIndex(pool, node),
    idempotency: new PgIdempotencyKeys(pool, { node }),
    revocations: new PgRevocationFloors(pool),
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
    async listen(channel, onPayload) {
      const l = new PgListener({
        url: resolveUrl(config.url, env),
        ssl: sslOf(config.tls),
        channel,
        onPayload,
        ...(config.approvalPollMs !== undefined ? { pollMs: config.approvalPollMs } : {}),
      });
      watchers.push(l);
      await l.start();
      return l;
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
        runs.stop();
        await pool.end().catch(() => undefined);
      })();
      return closing;
    },
  };
}
