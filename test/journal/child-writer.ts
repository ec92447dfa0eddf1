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
  /** With a start barrier: resolves when the child printed "ready" (or exits). */
  ready: Promise<void>;
  /** With a start barrier: lets the child start appending. */
  go: () => void;
}

/** `barrier`: the child waits on stdin after printing "ready" (appender START_AT "stdin"). */
export function spawnWriter(script: string, args: readonly string[], barrier = false): ChildWriter {
  const child = spawn(process.execPath, [script, ...args], {
    stdio: [barrier ? "pipe" : "ignore", "pipe", "pipe"],
  });
  const acked: number[] = [];
  let buf = "";
  let stderr = "";
  let onFirst: () => void = () => undefined;
  const firstAck = new Promise<void>((r) => {
    onFirst = r;
  });
  let onReady: () => void = () => undefined;
  const ready = new Promise<void>((r) => {
    onReady = r;
  });
  child.stdout!.setEncoding("utf8").on("data", (d: string) => {
    buf += d;
    const lines = buf.split("\n");
    buf = lines.pop()!;
    for (const l of lines) {
      if (l === "ready") onReady();
      else if (l) acked.push(Number(l));
    }
    if (acked.length > 0) onFirst();
  });
  child.stderr!.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((r) =>
    child.on("exit", (code, signal) => {
      onFirst();
      onReady();
      r({ code, signal, stderr });
    }),
  );
  const go = () => {
    // A child that already died has a closed stdin; its exit status tells the story.
    child.stdin?.on("error", () => undefined);
    child.stdin?.end("go\n");
  };
  return { child, acked, exited, firstAck, ready, go };
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
