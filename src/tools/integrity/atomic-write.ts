// Integrity files (key pins, signature files) are replaced atomically: a temp file in
// the same directory, created exclusively, written and fsynced, then renamed over the
// target, so a crash leaves either the old file or the new one, never half of one.
import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/** Writes `text` to `path` atomically with `mode`; on failure removes the temp file and rethrows. */
export function writeFileAtomic(path: string, text: string, mode: number): void {
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  let fd: number | undefined;
  try {
    fd = openSync(tmp, "wx", mode);
    writeSync(fd, text);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, path);
  } catch (err) {
    if (fd !== undefined) closeSync(fd);
    try {
      unlinkSync(tmp);
    } catch {
      // the temp file was never created or is already renamed
    }
    throw err;
  }
}
