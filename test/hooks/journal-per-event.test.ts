// What a one-shot host hook (`warden hooks claude-code`: one process per event, the engine
// opened on the journal each time) journals per event (issue 35: 4 entries, ~4.7 KB, an
// event). The in-process handshake of the adapter's own constant version said nothing
// (the same "compatible" entry every event); it is journaled only when incompatible, and
// the verdict still ties the answer to the exact event by its SHA-256.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generateKeyPair, Keyring } from "../../src/crypto/index.js";
import {
  answerHostEvent,
  claudeCodeAdapter,
  createEngine,
  HOOK_HANDSHAKE_EVENT,
  HOOK_VERDICT_EVENT,
} from "../../src/hooks/index.js";
import { openEmbeddedStore, verifyJournal } from "../../src/journal/index.js";
import { claudeBash, journalEntriesAt as entriesOf, tempDir, WORKSPACE } from "./helpers.js";

const signer = generateKeyPair("ed25519");
const hostEvent = (i: number) => claudeBash(`npm test -- --shard ${i}`);

describe("one-shot host hooks journal the decision and the event's hash, not a handshake per event", () => {
  it("three one-shot events: no handshake entries, one verdict each naming its event, the chain verifies", async () => {
    const path = join(tempDir(), "journal.db");
    for (let i = 0; i < 3; i++) {
      const engine = await createEngine({ journal: { path, signer }, workspace: WORKSPACE });
      await answerHostEvent(engine, claudeCodeAdapter, hostEvent(i), new Date().toISOString());
      await engine.close();
    }
    const entries = await entriesOf(path);
    expect(entries.filter((e) => e.type === HOOK_HANDSHAKE_EVENT)).toHaveLength(0);
    const verdicts = entries.filter((e) => e.type === HOOK_VERDICT_EVENT);
    expect(verdicts).toHaveLength(3);
    for (const v of verdicts) {
      expect((v.body as { event_hash: string }).event_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(JSON.stringify(v.body)).not.toContain("run the tests");
    }
    const store = openEmbeddedStore(path, { readonly: true });
    try {
      expect(await verifyJournal(store, new Keyring([signer.publicKey]))).toMatchObject({ ok: true });
    } finally {
      await store.close();
    }
  });

  it("an incompatible self-check is still journaled, and the event after it is refused", async () => {
    const path = join(tempDir(), "journal.db");
    const engine = await createEngine({ journal: { path, signer }, workspace: WORKSPACE });
    const hs = await engine.versionCheck({ aarts_version: "999" }, { selfCheck: true });
    expect(hs.compatible).toBe(false);
    const v = await engine.handle({
      hook_point: "PreToolUse",
      session_id: "s1",
      timestamp: new Date().toISOString(),
      host_id: "h",
      aarts_version: "999",
      turn_id: "t1",
      tool_name: "shell",
      tool_input: { command: "rm -rf /" },
      artifacts: [],
    });
    expect(v.decision).toBe("deny");
    await engine.close();
    const entries = await entriesOf(path);
    expect(entries.filter((e) => e.type === HOOK_HANDSHAKE_EVENT).map((e) => e.body)).toEqual([
      expect.objectContaining({ aarts_version: "999", compatible: false }),
    ]);
  });

  it("a host's own handshake (stdio, HTTP, daemon) is journaled as before", async () => {
    const path = join(tempDir(), "journal.db");
    const engine = await createEngine({
      journal: { path, signer },
      workspace: WORKSPACE,
      transport: "stdio",
    });
    await engine.versionCheck({ aarts_version: "1" });
    await engine.close();
    const hs = (await entriesOf(path)).filter((e) => e.type === HOOK_HANDSHAKE_EVENT);
    expect(hs.map((e) => e.body)).toEqual([
      expect.objectContaining({ compatible: true, transport: "stdio" }),
    ]);
  });
});
