// Engine fixtures for the hooks tests: a real engine over a real composed runtime, and a
// reader of the verdict entries it journaled.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createEngine, type Engine, type EngineConfig, HOOK_VERDICT_EVENT } from "../../src/hooks/index.js";
import { type JournalEntry, openEmbeddedStore } from "../../src/journal/index.js";

export const WORKSPACE = "/work/ws";

export async function engine(config: EngineConfig = {}): Promise<Engine> {
  const e = await createEngine({ workspace: WORKSPACE, ...config });
  const hs = await e.versionCheck({ aarts_version: "1" });
  if (!hs.compatible) throw new Error("handshake failed");
  return e;
}

export async function verdictEntries(e: Engine): Promise<JournalEntry[]> {
  const out: JournalEntry[] = [];
  for await (const x of e.runtime.store.entries()) {
    if ("type" in x && x.type === HOOK_VERDICT_EVENT) out.push(x as JournalEntry);
  }
  return out;
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "warden-hooks-"));
}

/** Every entry of the embedded journal at `path`, read by a reader of its own (the engines are closed). */
export async function journalEntriesAt(path: string): Promise<JournalEntry[]> {
  const store = openEmbeddedStore(path, { readonly: true });
  try {
    const out: JournalEntry[] = [];
    for await (const e of store.entries()) out.push(e as JournalEntry);
    return out;
  } finally {
    await store.close();
  }
}

/** A Claude Code PreToolUse Bash payload (the host's own format) in session s1 of WORKSPACE. */
export const claudeBash = (command: string, description = "run the tests") => ({
  session_id: "s1",
  transcript_path: "/tmp/t.jsonl",
  cwd: WORKSPACE,
  hook_event_name: "PreToolUse",
  tool_name: "Bash",
  tool_input: { command, description },
});
