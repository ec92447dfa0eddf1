// The stores a runtime opens and closes: the journal (the shared PostgreSQL store, schema
// checked, or the embedded segment journal), principal state and taint carried at the
// principal, and the order they close in.
import {
  MemoryPrincipalStateStore,
  MemoryPrincipalTaintStore,
  type PrincipalStateStore,
  type PrincipalTaintStore,
} from "../context/index.js";
import { type Journal, type JournalStore, openEmbeddedStore, openJournal } from "../journal/index.js";
import { type ChainCheckpointer, openPgNode, type PgNode } from "../store-pg/index.js";
import type { RuntimeConfig, RuntimeDeps } from "./config.js";
import { SqlitePrincipalStateStore } from "./principal-store.js";
import { SqlitePrincipalTaintStore } from "./taint-store.js";

/** The store factory: the shared PostgreSQL store (schema checked) or the SQLite journal. */
export async function openJournalStore(config: RuntimeConfig): Promise<{
  store: JournalStore;
  journal: Journal;
  node: PgNode | undefined;
  checkpoints: ChainCheckpointer | undefined;
}> {
  const c = config.journal;
  const node = config.store === undefined ? undefined : await openPgNode(config.store);
  const store =
    node?.journal ??
    openEmbeddedStore(c.path, c.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: c.busyTimeoutMs });
  try {
    const journal = await openJournal({
      store,
      signer: c.signer,
      ...(c.signatureMode !== undefined ? { signatureMode: c.signatureMode } : {}),
      ...(c.signingWorkers !== undefined ? { signingWorkers: c.signingWorkers } : {}),
    });
    // This replica's chain opens with a checkpoint naming it, before any other entry.
    const checkpoints = await node?.startCheckpoints?.(journal).catch(async (err: unknown) => {
      await journal.close();
      throw err;
    });
    return { store, journal, node, checkpoints };
  } catch (err) {
    await store.close();
    await node?.close();
    throw err;
  }
}

/** Where principal state (and taint carried at the principal) persists on a single node. */
function principalStatePath(config: RuntimeConfig): string | undefined {
  return (
    config.principalState ??
    (config.journal.path === ":memory:" ? undefined : `${config.journal.path}.principals.db`)
  );
}

export function principalStore(
  config: RuntimeConfig,
  deps: RuntimeDeps,
  node: PgNode | undefined,
): PrincipalStateStore & { close?(): void } {
  if (deps.principalStore !== undefined) return deps.principalStore;
  if (node !== undefined) return node.principals;
  const path = principalStatePath(config);
  return path === undefined ? new MemoryPrincipalStateStore() : SqlitePrincipalStateStore.open(path);
}

/** Where taint carried at the principal persists: PostgreSQL, or beside the principal state. */
export function taintStore(
  config: RuntimeConfig,
  deps: RuntimeDeps,
  node: PgNode | undefined,
): PrincipalTaintStore & { close?(): void } {
  if (node !== undefined) return node.taint;
  if (deps.principalStore !== undefined) return new MemoryPrincipalTaintStore();
  const path = principalStatePath(config);
  return path === undefined ? new MemoryPrincipalTaintStore() : SqlitePrincipalTaintStore.open(path);
}

export interface Opened {
  store: JournalStore;
  journal: Journal;
  principals: PrincipalStateStore & { close?(): void };
  taint?: (PrincipalTaintStore & { close?(): void }) | undefined;
  /** The shared PostgreSQL store (distributed mode), closed last. */
  node?: PgNode | undefined;
  /** This replica's cross-chain checkpoints (per-node chains): a last one before the journal closes. */
  checkpoints?: ChainCheckpointer | undefined;
}

export async function closeOpened(o: Opened): Promise<void> {
  try {
    await o.checkpoints?.stop(true).catch(() => undefined);
    await o.journal.close();
  } finally {
    await o.store.close();
    o.principals.close?.();
    o.taint?.close?.();
    await o.node?.close();
  }
}
