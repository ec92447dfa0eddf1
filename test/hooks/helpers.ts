// Engine fixtures for the hooks tests: a real engine over a real composed runtime, and a
// reader of the verdict entries it journaled.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createEngine, type Engine, type EngineConfig, HOOK_VERDICT_EVENT } from "../../src/hooks/index.js";
import type { JournalEntry } from "../../src/journal/index.js";

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
