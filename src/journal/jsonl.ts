// JSONL export: one entry per line, each line the RFC 8785 canonical JSON of the
// whole entry (signature included), in seq order. The export is self-contained
// evidence: verifyJournal(readJsonl(file), keyring) needs no database.
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { parseStrictJson } from "../contracts/index.js";
import { entryJson } from "./entry.js";
import { type JournalStore, MalformedRecord } from "./store.js";

/** Largest accepted line (an entry with its body), in UTF-16 code units. */
export const MAX_LINE_LENGTH = 16 * 1024 * 1024;

/** Writes every entry of a store as JSONL through `write`; returns the number written. */
export async function exportJsonl(
  store: JournalStore,
  write: (chunk: string) => void | Promise<void>,
): Promise<number> {
  let n = 0;
  for await (const e of store.entries()) {
    if (e instanceof MalformedRecord) {
      // An unreadable row is exported as what it is, so the verifier flags it at its position.
      await write(`${JSON.stringify({ malformed: e.where })}\n`);
    } else {
      await write(`${entryJson(e)}\n`);
    }
    n++;
  }
  return n;
}

/** Reads a JSONL export (a path or a stream) as entries; unparsable lines come back as MalformedRecord. */
export async function* readJsonl(input: string | Readable): AsyncIterable<unknown> {
  const stream = typeof input === "string" ? createReadStream(input, { encoding: "utf8" }) : input;
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  let n = 0;
  for await (const line of lines) {
    n++;
    try {
      yield parseStrictJson(line, { maxLength: MAX_LINE_LENGTH });
    } catch (err) {
      yield new MalformedRecord(`line ${n}`, (err as Error).message);
    }
  }
}
