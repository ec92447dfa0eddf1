// Tampering with an embedded journal as an attacker with file access would: one entry's
// JSON text is edited inside its segment and the batch is re-framed (its commit record
// recomputed, docs/journal.md §8), so only the chain and the signatures can tell. The edit
// keeps the byte length, so the derived index's positions still point at the entry.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { encodeSegment, readBatches } from "../journal/docs-verifier.js";

/**
 * Replaces the first occurrence of `from` by `to` (same byte length) in the first entry of the
 * journal at `journalPath` whose text holds `from` and passes `pick`; returns that entry's seq.
 */
export function tamperSegmentEntry(
  journalPath: string,
  from: string,
  to: string,
  pick: (entryText: string) => boolean = () => true,
): number {
  if (Buffer.byteLength(from) !== Buffer.byteLength(to)) throw new Error("a same-length edit only");
  const dir = `${journalPath}.segments`;
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".wjs"))
    .sort()) {
    const path = join(dir, file);
    const first = Number(file.slice(0, 20));
    const { batches, version } = readBatches(readFileSync(path), first);
    for (const b of batches) {
      const i = b.payloads.findIndex((p) => {
        const text = p.toString("utf8");
        return text.includes(from) && pick(text);
      });
      const text = i >= 0 ? b.payloads[i]?.toString("utf8") : undefined;
      if (text === undefined) continue;
      b.payloads[i] = Buffer.from(text.replace(from, to), "utf8");
      writeFileSync(path, encodeSegment(first, batches, version));
      return (JSON.parse(text) as { seq: number }).seq;
    }
  }
  throw new Error(`no entry of ${journalPath} holds ${from}`);
}
