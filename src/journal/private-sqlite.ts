// One way to open the small SQLite files that keep protective state beside the journal
// (principal state, trust tables, message nonces): created 0600 when missing, WAL, and
// synchronous=FULL so a committed change survives a power loss like a journal entry.
// Errors are thrown as they come; each store wraps them in its own coded error.
import { closeSync, openSync } from "node:fs";
import Database from "better-sqlite3";

/** Opens `path` (":memory:" for tests) as a durable, owner-only SQLite database. */
export function openPrivateSqlite(path: string): Database.Database {
  if (path !== ":memory:") {
    try {
      closeSync(openSync(path, "wx", 0o600));
    } catch {
      // It exists (kept as it is), or it cannot be created: the open below reports that.
    }
  }
  const db = new Database(path);
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = FULL");
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}
