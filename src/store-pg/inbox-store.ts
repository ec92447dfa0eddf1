// Waiting inter-agent messages shared by every replica (issue 37): a message accepted on
// one replica is received on any (the table `inbox_items`, one row per waiting message).
import type pg from "pg";
import { type InboxStore, inboxRow, parseInboxRow, type StoredInboxItem } from "../messaging/index.js";
import { storeError } from "./connect.js";

export class PgInboxStore implements InboxStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async load(): Promise<StoredInboxItem[]> {
    let rows: { recipient: string; message: string; context: string; seq: string }[];
    try {
      rows = (await this.#pool.query("SELECT recipient, message, context, seq FROM inbox_items ORDER BY seq"))
        .rows;
    } catch (err) {
      throw storeError("inbox", err);
    }
    return rows.map((row) => parseInboxRow(row));
  }

  async add(item: StoredInboxItem): Promise<void> {
    try {
      await this.#pool.query(
        "INSERT INTO inbox_items (recipient, message_id, message, context, seq) VALUES ($1, $2, $3, $4, $5) " +
          "ON CONFLICT (recipient, message_id) DO NOTHING",
        inboxRow(item),
      );
    } catch (err) {
      throw storeError("inbox", err);
    }
  }

  async remove(recipient: string, messageId: string): Promise<void> {
    try {
      await this.#pool.query("DELETE FROM inbox_items WHERE recipient = $1 AND message_id = $2", [
        recipient,
        messageId,
      ]);
    } catch (err) {
      throw storeError("inbox", err);
    }
  }
}
