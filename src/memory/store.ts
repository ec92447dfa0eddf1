// The memory store: one SQLite file beside the journal (0600, WAL, synchronous=FULL via
// openPrivateSqlite). A memory row keeps its owner, the run and run lineage that wrote
// it, its classification, its taint labels and provenance exactly as the Gate computed
// them at write time, and its quarantine. Every read is recorded (memory, run,
// principal, time) so the runs that read a poisoned memory can be listed. Rows read
// back are validated: a row that does not parse is a store fault (fail closed).
import type Database from "better-sqlite3";
import { z } from "zod";
import { MemoryError, TaintLabel } from "../contracts/index.js";
import { openPrivateSqlite } from "../journal/index.js";

export const MemoryRecordSchema = z.strictObject({
  id: z.string().min(1).max(64),
  principalId: z.string().min(1).max(256),
  runId: z.string().min(1).max(128),
  lineage: z.string().min(1).max(128),
  scope: z.enum(["private", "shared"]),
  content: z.string(),
  classification: z.string().min(1).max(64),
  taint: z.array(TaintLabel),
  /** The decision that admitted the write and the request hash of that call. */
  decisionId: z.string().max(128),
  createdAt: z.number().int().nonnegative(),
  quarantinedAt: z.number().int().nonnegative().nullable(),
  quarantineReason: z.string().max(1024).nullable(),
  embedding: z.array(z.number()).nullable(),
});
export type MemoryRecord = z.infer<typeof MemoryRecordSchema>;

export interface MemoryRead {
  runId: string;
  principalId: string;
  at: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS memories (
  id TEXT PRIMARY KEY, principal_id TEXT NOT NULL, run_id TEXT NOT NULL, lineage TEXT NOT NULL,
  scope TEXT NOT NULL, content TEXT NOT NULL, classification TEXT NOT NULL, taint TEXT NOT NULL,
  decision_id TEXT NOT NULL, created_at INTEGER NOT NULL, quarantined_at INTEGER,
  quarantine_reason TEXT, embedding TEXT
);
CREATE INDEX IF NOT EXISTS memories_owner ON memories (principal_id, created_at);
CREATE INDEX IF NOT EXISTS memories_shared ON memories (scope, created_at);
CREATE TABLE IF NOT EXISTS memory_reads (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, memory_id TEXT NOT NULL, run_id TEXT NOT NULL,
  principal_id TEXT NOT NULL, at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS memory_reads_memory ON memory_reads (memory_id, seq);
`;

interface Row {
  id: string;
  principal_id: string;
  run_id: string;
  lineage: string;
  scope: string;
  content: string;
  classification: string;
  taint: string;
  decision_id: string;
  created_at: number;
  quarantined_at: number | null;
  quarantine_reason: string | null;
  embedding: string | null;
}

function fault(message: string, cause?: unknown): MemoryError {
  return new MemoryError("ERR_MEMORY_STORE", message, cause === undefined ? {} : { cause });
}

function fromRow(row: Row): MemoryRecord {
  let parsed: unknown;
  try {
    parsed = {
      id: row.id,
      principalId: row.principal_id,
      runId: row.run_id,
      lineage: row.lineage,
      scope: row.scope,
      content: row.content,
      classification: row.classification,
      taint: JSON.parse(row.taint),
      decisionId: row.decision_id,
      createdAt: row.created_at,
      quarantinedAt: row.quarantined_at,
      quarantineReason: row.quarantine_reason,
      embedding: row.embedding === null ? null : JSON.parse(row.embedding),
    };
  } catch (err) {
    throw fault(`memory ${row.id} is corrupt`, err);
  }
  const r = MemoryRecordSchema.safeParse(parsed);
  if (!r.success) throw fault(`memory ${row.id} is corrupt`);
  return r.data;
}

/** Who may see what, as the store filters it (the firewall derives it from config and run). */
export interface Visibility {
  principalId: string;
  /** Only the principal's own memories of this lineage (readScope lineage). */
  lineage?: string;
  /** Highest classification rank readable, and the levels at or below it. */
  levels: readonly string[];
}

export class MemoryStore {
  readonly #db: Database.Database;
  readonly #maxReads: number;

  private constructor(db: Database.Database, maxReads: number) {
    this.#db = db;
    this.#maxReads = maxReads;
  }

  static open(path: string, maxReadsPerMemory = 10_000): MemoryStore {
    let db: Database.Database | undefined;
    try {
      db = openPrivateSqlite(path);
      db.exec(SCHEMA);
      return new MemoryStore(db, maxReadsPerMemory);
    } catch (err) {
      db?.close();
      throw fault("the memory store cannot be opened", err);
    }
  }

  count(principalId?: string): number {
    const row =
      principalId === undefined
        ? this.#db.prepare("SELECT count(*) AS n FROM memories").get()
        : this.#db.prepare("SELECT count(*) AS n FROM memories WHERE principal_id = ?").get(principalId);
    return (row as { n: number }).n;
  }

  insert(r: MemoryRecord): void {
    this.#db
      .prepare(
        `INSERT INTO memories VALUES (@id, @principalId, @runId, @lineage, @scope, @content,
         @classification, @taint, @decisionId, @createdAt, NULL, NULL, @embedding)`,
      )
      .run({
        ...r,
        taint: JSON.stringify(r.taint),
        embedding: r.embedding === null ? null : JSON.stringify(r.embedding),
      });
  }

  get(id: string): MemoryRecord | undefined {
    const row = this.#db.prepare("SELECT * FROM memories WHERE id = ?").get(id) as Row | undefined;
    return row === undefined ? undefined : fromRow(row);
  }

  delete(id: string): boolean {
    return this.#db.prepare("DELETE FROM memories WHERE id = ?").run(id).changes === 1;
  }

  /** The newest `limit` memories `v` may see, quarantined ones excluded. */
  visible(v: Visibility, limit: number): MemoryRecord[] {
    const levels = JSON.stringify(v.levels);
    const own = v.lineage === undefined ? "principal_id = @p" : "(principal_id = @p AND lineage = @lineage)";
    const rows = this.#db
      .prepare(
        `SELECT * FROM memories WHERE quarantined_at IS NULL
           AND (${own} OR scope = 'shared')
           AND classification IN (SELECT value FROM json_each(@levels))
         ORDER BY created_at DESC, id DESC LIMIT @limit`,
      )
      .all({ p: v.principalId, lineage: v.lineage ?? null, levels, limit }) as Row[];
    return rows.map(fromRow);
  }

  quarantine(id: string, reason: string, at: number): boolean {
    return (
      this.#db
        .prepare(
          "UPDATE memories SET quarantined_at = ?, quarantine_reason = ? WHERE id = ? AND quarantined_at IS NULL",
        )
        .run(at, reason, id).changes === 1
    );
  }

  /** Records that a run read memories; keeps the newest `maxReadsPerMemory` reads of each. */
  recordReads(ids: readonly string[], read: MemoryRead): void {
    const insert = this.#db.prepare(
      "INSERT INTO memory_reads (memory_id, run_id, principal_id, at) VALUES (?, ?, ?, ?)",
    );
    const trim = this.#db.prepare(
      `DELETE FROM memory_reads WHERE memory_id = ? AND seq NOT IN
         (SELECT seq FROM memory_reads WHERE memory_id = ? ORDER BY seq DESC LIMIT ?)`,
    );
    this.#db.transaction(() => {
      for (const id of ids) {
        insert.run(id, read.runId, read.principalId, read.at);
        trim.run(id, id, this.#maxReads);
      }
    })();
  }

  /** Every recorded read of a memory, oldest first. */
  readsOf(id: string): MemoryRead[] {
    const rows = this.#db
      .prepare("SELECT run_id, principal_id, at FROM memory_reads WHERE memory_id = ? ORDER BY seq")
      .all(id) as { run_id: string; principal_id: string; at: number }[];
    return rows.map((r) => ({ runId: r.run_id, principalId: r.principal_id, at: r.at }));
  }

  close(): void {
    this.#db.close();
  }
}
