// L3: ECTs appended to the audit ledger (the journal) after DAG validation: a jti is
// recorded once, every `par` resolves to an ECT already in the ledger (or earlier in the
// same batch), the batch has no cycle, and no child is issued before a parent. The
// ledger keeps a jti → iat index (the EctIndex port): in memory, loaded from the journal
// when it opens, or shared by every replica (src/store-pg PgEctIndex), where a jti is
// reserved once across replicas and a parent counts only once its journal entry is durable.
import { z } from "zod";
import { TrustError } from "../contracts/index.js";
import type { EventTypeRegistry, Journal, JournalEntry } from "../journal/index.js";
import type { EctClaims } from "./ect.js";

export const ECT_LEDGER_EVENT = "warden.trust.ect";

const Jti = z.string().min(1).max(256);
export const EctLedgerBodySchema = z.strictObject({
  jti: Jti,
  iss: z.string().min(1).max(1024),
  exec_act: z.string().min(1).max(256),
  iat: z.number().int().min(0),
  par: z.array(Jti).max(256),
  /**
   * The token in JWS flattened form (RFC 7515 §7.2.2). Not the compact string: the
   * journal masks anything shaped like a bearer JWT, and an ECT is evidence, not a
   * credential (it authorizes nothing), so it is kept whole to stay re-verifiable.
   */
  jws: z.strictObject({
    protected: z.string().min(1).max(4096),
    payload: z
      .string()
      .min(1)
      .max(16 * 1024),
    signature: z.string().max(1024),
  }),
});
export type EctLedgerBody = z.infer<typeof EctLedgerBodySchema>;

function flattened(token: string): EctLedgerBody["jws"] {
  const [p, payload, signature] = token.split(".");
  return { protected: p ?? "", payload: payload ?? "", signature: signature ?? "" };
}

/** The compact token of a ledger entry's body. */
export function ledgerToken(body: EctLedgerBody): string {
  return `${body.jws.protected}.${body.jws.payload}.${body.jws.signature}`;
}

export function registerEctLedgerEventType(registry: Pick<EventTypeRegistry, "has" | "register">): void {
  if (!registry.has(ECT_LEDGER_EVENT)) registry.register(ECT_LEDGER_EVENT, EctLedgerBodySchema);
}

export interface DagNode {
  jti: string;
  iat: number;
  par: readonly string[];
}

export type DagCode =
  | "ERR_TRUST_ECT_DUPLICATE"
  | "ERR_TRUST_ECT_PARENT_UNKNOWN"
  | "ERR_TRUST_ECT_CYCLE"
  | "ERR_TRUST_ECT_TIME_ORDER";
export type DagCheck =
  | { ok: true; order: DagNode[] }
  | { ok: false; code: DagCode; jti: string; message: string };

/** Finds a cycle among the batch's own edges (depth-first, colouring). */
function findCycle(batch: ReadonlyMap<string, DagNode>): string | undefined {
  const state = new Map<string, 1 | 2>();
  const visit = (jti: string): string | undefined => {
    state.set(jti, 1);
    for (const p of batch.get(jti)?.par ?? []) {
      if (!batch.has(p)) continue;
      if (state.get(p) === 1) return p;
      if (state.get(p) === undefined) {
        const found = visit(p);
        if (found !== undefined) return found;
      }
    }
    state.set(jti, 2);
    return undefined;
  };
  for (const jti of batch.keys()) {
    if (state.get(jti) === undefined) {
      const found = visit(jti);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** Parents before children (the batch is acyclic). */
function topological(batch: ReadonlyMap<string, DagNode>): DagNode[] {
  const out: DagNode[] = [];
  const done = new Set<string>();
  const place = (n: DagNode): void => {
    if (done.has(n.jti)) return;
    done.add(n.jti);
    for (const p of n.par) {
      const parent = batch.get(p);
      if (parent !== undefined) place(parent);
    }
    out.push(n);
  };
  for (const n of batch.values()) place(n);
  return out;
}

/** Validates a batch of new nodes against the known ledger (`known(jti)` → its iat). */
export function validateDag(nodes: readonly DagNode[], known: (jti: string) => number | undefined): DagCheck {
  const batch = new Map<string, DagNode>();
  for (const n of nodes) {
    if (batch.has(n.jti) || known(n.jti) !== undefined) {
      return {
        ok: false,
        code: "ERR_TRUST_ECT_DUPLICATE",
        jti: n.jti,
        message: `ECT ${n.jti} is already recorded`,
      };
    }
    batch.set(n.jti, n);
  }
  for (const n of nodes) {
    for (const p of n.par) {
      const parentIat = batch.get(p)?.iat ?? known(p);
      if (parentIat === undefined) {
        return {
          ok: false,
          code: "ERR_TRUST_ECT_PARENT_UNKNOWN",
          jti: n.jti,
          message: `ECT ${n.jti}: parent ${p} does not resolve`,
        };
      }
      if (parentIat > n.iat) {
        return {
          ok: false,
          code: "ERR_TRUST_ECT_TIME_ORDER",
          jti: n.jti,
          message: `ECT ${n.jti} is issued before its parent ${p}`,
        };
      }
    }
  }
  const cyclic = findCycle(batch);
  if (cyclic !== undefined) {
    return { ok: false, code: "ERR_TRUST_ECT_CYCLE", jti: cyclic, message: `ECT ${cyclic} is on a cycle` };
  }
  return { ok: true, order: topological(batch) };
}

export type LedgerAppend = { ok: true; entries: JournalEntry[] } | Extract<DagCheck, { ok: false }>;

/**
 * Where the ledger's jti → iat index lives. `reserve` validates a batch against every jti
 * recorded or reserved so far and, when it passes, reserves the batch's jtis (atomically:
 * two concurrent reservations of one jti yield one success); `recorded` says the batch's
 * journal entries are durable, from then on they count as parents.
 */
export interface EctIndex {
  /** Whether `jti` is recorded (durable in the journal). */
  has(jti: string): Promise<boolean>;
  reserve(nodes: readonly DagNode[]): Promise<DagCheck>;
  recorded(jtis: readonly string[]): Promise<void>;
}

/** The node-local index: a map loaded from the journal (SQLite mode). */
class MemoryEctIndex implements EctIndex {
  readonly iat = new Map<string, number>();

  has(jti: string): Promise<boolean> {
    return Promise.resolve(this.iat.has(jti));
  }

  reserve(nodes: readonly DagNode[]): Promise<DagCheck> {
    // Synchronous up to the returned promise: concurrent appends cannot both claim a jti.
    const check = validateDag(nodes, (jti) => this.iat.get(jti));
    if (check.ok) for (const node of check.order) this.iat.set(node.jti, node.iat);
    return Promise.resolve(check);
  }

  recorded(): Promise<void> {
    return Promise.resolve();
  }
}

/** The L3 audit ledger over a journal. */
export class EctLedger {
  readonly #journal: Pick<Journal, "append">;
  readonly #index: EctIndex;
  /** Set when an append failed after validation: the index may be ahead of the journal. */
  #broken = false;

  private constructor(journal: Pick<Journal, "append">, index: EctIndex) {
    this.#journal = journal;
    this.#index = index;
  }

  /**
   * Opens the ledger. Without `shared`, the index is node-local, loaded from the ECTs the
   * journal already holds; with it, every check goes to the shared index.
   */
  static async open(journal: Pick<Journal, "append" | "store">, shared?: EctIndex): Promise<EctLedger> {
    if (shared !== undefined) return new EctLedger(journal, shared);
    const index = new MemoryEctIndex();
    for (const e of await journal.store.query({ type: ECT_LEDGER_EVENT })) {
      const body = EctLedgerBodySchema.safeParse(e.body);
      if (body.success) index.iat.set(body.data.jti, body.data.iat);
    }
    return new EctLedger(journal, index);
  }

  has(jti: string): Promise<boolean> {
    return this.#index.has(jti);
  }

  /**
   * Validates a batch of ECTs (token and verified claims) as a whole (none is appended if
   * any fails), reserves their jtis in the index, then appends them parents first and
   * marks them recorded: an append is acknowledged only once durable. In memory, the
   * reservation happens synchronously, before any await, so concurrent appends cannot
   * both claim a jti; the shared index reserves with a unique constraint. A failure after
   * the reservation is a fault that closes the ledger (it refuses everything afterwards);
   * the jtis stay reserved, never recorded, so no replica accepts a child of them.
   */
  async append(items: readonly { token: string; claims: EctClaims }[]): Promise<LedgerAppend> {
    if (this.#broken)
      throw new TrustError("ERR_TRUST_LEDGER_FAILED", "the ECT ledger failed an append and is closed");
    const byJti = new Map(items.map((i) => [i.claims.jti, i]));
    const check = await this.#index.reserve(
      items.map((i) => ({ jti: i.claims.jti, iat: i.claims.iat, par: [...i.claims.par] })),
    );
    if (!check.ok) return check;
    const appends = check.order.map((node) => {
      const { token, claims } = byJti.get(node.jti) as { token: string; claims: EctClaims };
      const body: EctLedgerBody = {
        jti: claims.jti,
        iss: claims.iss,
        exec_act: claims.exec_act,
        iat: claims.iat,
        par: [...claims.par],
        jws: flattened(token),
      };
      return this.#journal.append({ type: ECT_LEDGER_EVENT, body });
    });
    try {
      const entries = await Promise.all(appends);
      await this.#index.recorded(check.order.map((n) => n.jti));
      return { ok: true, entries };
    } catch (err) {
      this.#broken = true;
      throw err;
    }
  }
}
