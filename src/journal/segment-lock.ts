// The writers' lock of a segment journal: SQLite's RESERVED lock on an empty file
// (`BEGIN IMMEDIATE` … `ROLLBACK`, nothing ever written). It is an fcntl lock, so it
// serializes writers in other processes and in this one, waits up to the busy
// timeout, and is released by the kernel when its holder dies — a writer killed
// mid-batch never leaves the journal locked.
import { closeSync, fchmodSync, openSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { JournalError } from "../contracts/index.js";

export const LOCK_FILE = "lock";

export class SegmentLock {
  readonly #db: Database.Database;
  readonly #begin: Database.Statement;
  readonly #end: Database.Statement;

  constructor(dir: string, busyTimeoutMs: number) {
    const path = join(dir, LOCK_FILE);
    try {
      const fd = openSync(path, "a", 0o600);
      fchmodSync(fd, 0o600);
      closeSync(fd);
    } catch {
      // Another process created it, or a read-only directory: opening says which.
    }
    this.#db = new Database(path);
    this.#db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    this.#begin = this.#db.prepare("BEGIN IMMEDIATE");
    this.#end = this.#db.prepare("ROLLBACK");
  }

  /** Runs `fn` holding the lock. */
  hold<T>(fn: () => T): T {
    try {
      this.#begin.run();
    } catch (err) {
      throw new JournalError("ERR_JOURNAL_STORE", `journal lock not acquired: ${(err as Error).message}`, {
        cause: err,
      });
    }
    try {
      return fn();
    } finally {
      this.#end.run();
    }
  }

  close(): void {
    this.#db.close();
  }
}
