// `npm run bench -- hooks-journal`: what the journal holds per hook event (issue 35: "180
// hook events write 724 entries, ~4.5 KB per event"). One-shot host hooks (`warden hooks
// claude-code`: one process per event) are simulated in this process — the engine opened
// on the same journal for each event, answerHostEvent, closed — and the entries counted by
// type (bytes of each entry's canonical JSON line, as the segments hold it). Baseline, same
// run: the same flow with the adapter's in-process handshake journaled each event, as before.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateKeyPair } from "../src/crypto/index.js";
import { AARTS_VERSION, answerHostEvent, claudeCodeAdapter, createEngine } from "../src/hooks/index.js";
import { entryJson, type JournalEntry, openEmbeddedStore } from "../src/journal/index.js";

const N = Number(process.env.HOOKS_JOURNAL_N ?? 60);
const WORKSPACE = "/work/ws";

const hostEvent = (i: number) => ({
  session_id: "bench-session",
  transcript_path: "/tmp/t.jsonl",
  cwd: WORKSPACE,
  hook_event_name: "PreToolUse",
  tool_name: "Bash",
  tool_input: { command: `npm test -- --shard ${i}`, description: "run the tests" },
});

interface Tally {
  entries: number;
  bytes: number;
  byType: Map<string, { n: number; bytes: number }>;
}

async function oneShot(dir: string, asBefore: boolean): Promise<Tally> {
  const path = join(dir, asBefore ? "before.db" : "now.db");
  const signer = generateKeyPair("ed25519");
  for (let i = 0; i < N; i++) {
    const engine = await createEngine({ journal: { path, signer }, workspace: WORKSPACE });
    if (asBefore) await engine.versionCheck({ aarts_version: AARTS_VERSION });
    await answerHostEvent(engine, claudeCodeAdapter, hostEvent(i), new Date().toISOString());
    await engine.close();
  }
  const store = openEmbeddedStore(path, { readonly: true });
  const t: Tally = { entries: 0, bytes: 0, byType: new Map() };
  try {
    for await (const e of store.entries()) {
      const b = Buffer.byteLength(entryJson(e as JournalEntry));
      const k = t.byType.get((e as JournalEntry).type) ?? { n: 0, bytes: 0 };
      k.n++;
      k.bytes += b;
      t.byType.set((e as JournalEntry).type, k);
      t.entries++;
      t.bytes += b;
    }
  } finally {
    await store.close();
  }
  return t;
}

function row(name: string, t: Tally): string {
  const types = [...t.byType]
    .sort((a, b) => b[1].bytes - a[1].bytes)
    .map(([type, k]) => `${type} ${(k.n / N).toFixed(2)} × ${Math.round(k.bytes / k.n)} B`)
    .join("; ");
  return `| ${name} | ${(t.entries / N).toFixed(2)} | ${Math.round(t.bytes / N)} B | ${types} |\n`;
}

const dir = mkdtempSync(join(tmpdir(), "warden-bench-hooks-journal-"));
try {
  const before = await oneShot(dir, true);
  const now = await oneShot(dir, false);
  process.stdout.write(
    `Journal per one-shot hook event (${N} PreToolUse Bash events, one engine per event)\n\n` +
      "| flow | entries/event | bytes/event | by type (per event × size) |\n|---|---|---|---|\n" +
      row("baseline: handshake journaled each event (as before)", before) +
      row("now: self-check journaled only if incompatible", now),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
