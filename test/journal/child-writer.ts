// A journal writer in a child process, for the crash and multi-process tests: it prints
// each acknowledged seq on its own line, so the parent knows which appends resolved
// before it killed the child.
import { type ChildProcess, spawn } from "node:child_process";
import type { KeyPair } from "../../src/crypto/index.js";
import { MalformedRecord, SqliteJournalStore, verifyJournal } from "../../src/journal/index.js";
import { keyringOf } from "./helpers.js";

export interface ChildWriter {
  child: ChildProcess;
  /** Seqs the child reported as durable, in order. */
  acked: number[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
  /** Resolves at the first acknowledged append (or when the child exits). */
  firstAck: Promise<void>;
}

export function spawnWriter(script: string, args: readonly string[]): ChildWriter {
  const child = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  const acked: number[] = [];
  let buf = "";
  let stderr = "";
  let onFirst: () => void = () => undefined;
  const firstAck = new Promise<void>((r) => {
    onFirst = r;
  });
  child.stdout!.setEncoding("utf8").on("data", (d: string) => {
    buf += d;
    const lines = buf.split("\n");
    buf = lines.pop()!;
    for (const l of lines) if (l) acked.push(Number(l));
    if (acked.length > 0) onFirst();
  });
  child.stderr!.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((r) =>
    child.on("exit", (code, signal) => {
      onFirst();
      r({ code, signal, stderr });
    }),
  );
  return { child, acked, exited, firstAck };
}

/** Verifies a journal file read-only and lists the seqs it holds. */
export async function verifyJournalFile(db: string, key: KeyPair) {
  const store = SqliteJournalStore.open(db, { readonly: true });
  try {
    const seqs = new Set<number>();
    for await (const e of store.entries()) if (!(e instanceof MalformedRecord)) seqs.add(e.seq);
    return { report: await verifyJournal(store, keyringOf(key)), seqs };
  } finally {
    await store.close();
  }
}
