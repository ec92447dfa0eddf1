// Inbox contents on disk (issue 37): a message the communication gate accepted waits for
// its recipient across a restart. `SqliteInboxStore` keeps one row per waiting message
// (recipient, message id, the sealed message and its cross-agent context as canonical
// JSON, the journal seq) beside the nonce store; PostgreSQL (src/store-pg inbox-store.ts)
// shares the same rows across replicas. A message is written before `submit` answers ok
// and deleted once its recipient's run was started for it. A row that does not parse is a
// fault (ERR_RUNTIME_STATE_CORRUPT), never dropped silently.
import type Database from "better-sqlite3";
import { canonicalJson, RuntimeError } from "../contracts/index.js";
import { openPrivateSqlite } from "../journal/index.js";
import { type CrossAgentContext, CrossAgentContextSchema } from "./events.js";
import { type SealedMessage, SealedMessageSchema } from "./wire.js";

type MaybePromise<T> = T | Promise<T>;

/** One waiting message. */
export interface StoredInboxItem {
  recipient: string;
  message: SealedMessage;
  context: CrossAgentContext;
  seq: number;
}

export interface InboxStore {
  /** Every waiting message, oldest first (read once at start). */
  load(): MaybePromise<StoredInboxItem[]>;
  add(item: StoredInboxItem): MaybePromise<void>;
  remove(recipient: string, messageId: string): MaybePromise<void>;
}

/** Parses a stored row (shared with the PostgreSQL store). */
export function parseInboxRow(row: {
  recipient: unknown;
  message: unknown;
  context: unknown;
  seq: unknown;
}): StoredInboxItem {
  const json = (v: unknown): unknown => {
    try {
      return typeof v === "string" ? JSON.parse(v) : undefined;
    } catch {
      return undefined;
    }
  };
  const message = SealedMessageSchema.safeParse(json(row.message));
  const context = CrossAgentContextSchema.safeParse(json(row.context));
  const seq = Number(row.seq);
  if (!message.success || !context.success || typeof row.recipient !== "string" || !Number.isSafeInteger(seq))
    throw new RuntimeError("ERR_RUNTIME_STATE_CORRUPT", "a stored inbox message is unreadable");
  return { recipient: row.recipient, message: message.data, context: context.data, seq };
}

/** The row values an item is stored as. */
export function inboxRow(item: StoredInboxItem): [string, string, string, string, number] {
  return [
    item.recipient,
    item.message.header.message_id,
    canonicalJson(item.message),
    canonicalJson(item.context),
    item.seq,
  ];
}

export class SqliteInboxStore implements InboxStore {
  readonly #db: Database.Database;
  readonly #all: Database.Statement<[], { recipient: string; message: string; context: string; seq: number }>;
  readonly #put: Database.Statement<[string, string, string, string, number]>;
  readonly #del: Database.Statement<[string, string]>;

  private constructor(db: Database.Database) {
    this.#db = db;
    db.exec(
      "CREATE TABLE IF NOT EXISTS inbox_items (recipient TEXT NOT NULL, message_id TEXT NOT NULL, " +
        "message TEXT NOT NULL, context TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (recipient, message_id)) STRICT",
    );
    this.#all = db.prepare("SELECT recipient, message, context, seq FROM inbox_items ORDER BY seq");
    this.#put = db.prepare(
      "INSERT INTO inbox_items (recipient, message_id, message, context, seq) VALUES (?, ?, ?, ?, ?) " +
        "ON CONFLICT(recipient, message_id) DO NOTHING",
    );
    this.#del = db.prepare("DELETE FROM inbox_items WHERE recipient = ? AND message_id = ?");
  }

  /** Opens (creating 0600 when missing) the inbox file; ":memory:" for tests. */
  static open(path: string): SqliteInboxStore {
    try {
      return new SqliteInboxStore(openPrivateSqlite(path));
    } catch (err) {
      throw new RuntimeError("ERR_RUNTIME_STATE_OPEN", `cannot open the inbox store ${path}`, { cause: err });
    }
  }

  load(): StoredInboxItem[] {
    return this.#all.all().map((row) => parseInboxRow(row));
  }

  add(item: StoredInboxItem): void {
    this.#put.run(...inboxRow(item));
  }

  remove(recipient: string, messageId: string): void {
    this.#del.run(recipient, messageId);
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }
}
