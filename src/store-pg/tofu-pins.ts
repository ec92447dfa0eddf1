// SchemaPin contract-key pins and hook source pins shared by every replica (src/tools
// SharedPins port; distributed mode). The first pin of a (kind, tool, domain) is one
// `INSERT … ON CONFLICT DO NOTHING`: of two replicas pinning different keys at once one
// wins, and the other reads the winner's pin back and refuses its own key as changed.
// Only an operator's re-pin (`replace`) changes a pin; replicas started afterwards use it.
import type pg from "pg";
import { RuntimeError } from "../contracts/index.js";
import { storeError } from "./connect.js";

export const TOFU_PIN_KINDS = ["schemapin", "hook-source"] as const;
/** `schemapin`: contract signing keys (`contracts.trust`); `hook-source`: hooks source trust. */
export type TofuPinKind = (typeof TOFU_PIN_KINDS)[number];

const FINGERPRINT = /^sha256:[0-9a-f]{64}$/;

/** src/tools PinEntry (structurally: store-pg does not import the tools layer). */
export interface TofuPin {
  toolId: string;
  domain: string;
  fingerprint: string;
  pinnedAt: string;
}

/** src/tools SharedPins, the port of one kind (checked where the runtime wires it). */
export interface TofuPinsOfKind {
  load(): Promise<TofuPin[]>;
  pinFirst(entry: TofuPin): Promise<TofuPin>;
}

interface Row {
  tool_id: string;
  domain: string;
  fingerprint: string;
  pinned_at: string;
}

function entryOf(kind: TofuPinKind, r: Row): TofuPin {
  if (!FINGERPRINT.test(r.fingerprint))
    throw new RuntimeError(
      "ERR_RUNTIME_STATE_CORRUPT",
      `the ${kind} pin of ${r.tool_id}@${r.domain} is unreadable`,
    );
  return { toolId: r.tool_id, domain: r.domain, fingerprint: r.fingerprint, pinnedAt: r.pinned_at };
}

export class PgTofuPins {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  /** Every pin of `kind`, in (tool, domain) order. */
  async load(kind: TofuPinKind): Promise<TofuPin[]> {
    let rows: Row[];
    try {
      const r = await this.#pool.query<Row>(
        "SELECT tool_id, domain, fingerprint, pinned_at FROM tofu_pins WHERE kind = $1 ORDER BY tool_id, domain",
        [kind],
      );
      rows = r.rows;
    } catch (err) {
      throw storeError("TOFU pins", err);
    }
    return rows.map((r) => entryOf(kind, r));
  }

  async get(kind: TofuPinKind, toolId: string, domain: string): Promise<TofuPin | undefined> {
    let row: Row | undefined;
    try {
      const r = await this.#pool.query<Row>(
        "SELECT tool_id, domain, fingerprint, pinned_at FROM tofu_pins WHERE kind = $1 AND tool_id = $2 AND domain = $3",
        [kind, toolId, domain],
      );
      row = r.rows[0];
    } catch (err) {
      throw storeError("TOFU pins", err);
    }
    return row === undefined ? undefined : entryOf(kind, row);
  }

  /** Pins `e` unless its (tool, domain) is pinned already; resolves with the pin that holds. */
  async pinFirst(kind: TofuPinKind, e: TofuPin): Promise<TofuPin> {
    try {
      const r = await this.#pool.query(
        "INSERT INTO tofu_pins (kind, tool_id, domain, fingerprint, pinned_at) VALUES ($1, $2, $3, $4, $5) " +
          "ON CONFLICT (kind, tool_id, domain) DO NOTHING",
        [kind, e.toolId, e.domain, e.fingerprint, e.pinnedAt],
      );
      if (r.rowCount === 1) return { ...e };
    } catch (err) {
      throw storeError("TOFU pins", err);
    }
    const pinned = await this.get(kind, e.toolId, e.domain);
    if (pinned === undefined) throw storeError("TOFU pins", new Error("a conflicting pin vanished"));
    return pinned;
  }

  /** The operator's re-pin: `e` is the pin of its (tool, domain) from now on. */
  async replace(kind: TofuPinKind, e: TofuPin): Promise<void> {
    try {
      await this.#pool.query(
        "INSERT INTO tofu_pins (kind, tool_id, domain, fingerprint, pinned_at) VALUES ($1, $2, $3, $4, $5) " +
          "ON CONFLICT (kind, tool_id, domain) DO UPDATE SET fingerprint = excluded.fingerprint, pinned_at = excluded.pinned_at",
        [kind, e.toolId, e.domain, e.fingerprint, e.pinnedAt],
      );
    } catch (err) {
      throw storeError("TOFU pins", err);
    }
  }

  /** The port of one kind (src/tools SharedPins). */
  forKind(kind: TofuPinKind): TofuPinsOfKind {
    return { load: () => this.load(kind), pinFirst: (e) => this.pinFirst(kind, e) };
  }
}
