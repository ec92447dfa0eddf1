// Group commit gathers appends that arrive over a few event-loop turns (a sidecar's
// connections deliver requests turn by turn) into one transaction — one fsync — without
// a timer: a lone append commits on the next turn, and nothing is acknowledged before
// its commit returned.
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openJournal, SqliteJournalStore, verifyJournal } from "../../src/journal/index.js";
import { KEY, keyringOf, RUN, TRACE, tempDir } from "./helpers.js";

let t: ReturnType<typeof tempDir>;
let store: SqliteJournalStore;

beforeEach(() => {
  t = tempDir();
  store = SqliteJournalStore.open(join(t.dir, "j.db"));
});
afterEach(async () => {
  await store.close();
  t.cleanup();
});

const obs = (i: number) => ({
  type: "ObservationsCollected",
  run_id: RUN,
  trace_id: TRACE,
  body: { observation_count: i },
});

const turn = () => new Promise<void>((r) => setImmediate(r));

describe("group commit gathering", () => {
  it("appends issued over four consecutive turns share one commit", async () => {
    const j = await openJournal({ store, signer: KEY });
    try {
      const c0 = store.commits;
      const pending = [];
      for (let k = 0; k < 4; k++) {
        pending.push(j.append(obs(k * 2)), j.append(obs(k * 2 + 1)));
        await turn();
      }
      const entries = await Promise.all(pending);
      expect(store.commits - c0).toBe(1);
      expect(entries.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(await verifyJournal(store, keyringOf(KEY))).toMatchObject({ ok: true, checked: 8 });
    } finally {
      await j.close();
    }
  });

  it("a lone append is not held back: it is durable before the next append is issued", async () => {
    const j = await openJournal({ store, signer: KEY });
    try {
      const c0 = store.commits;
      for (let i = 0; i < 3; i++) await j.append(obs(i));
      expect(store.commits - c0).toBe(3);
      expect(await store.count()).toBe(3);
    } finally {
      await j.close();
    }
  });
});
