// Runtime-built entries are typed at construction: appendBuilt() takes a built-in
// type with a body of its schema's TypeScript type and does not parse it with zod
// again; everything read back from disk is validated, so a row changed on disk is
// refused before the journal chains on it. A Sealer of one's own seals each commit.
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { GATE_DECISION } from "../../src/contracts/index.js";
import {
  batchSealer,
  builtinEventTypes,
  EventTypeRegistry,
  MalformedRecord,
  openJournal,
  type Sealer,
  SqliteJournalStore,
  verifyJournal,
} from "../../src/journal/index.js";
import { collect, gateDecision, KEY, keyringOf, RUN, TRACE, tempDir } from "./helpers.js";

let t: ReturnType<typeof tempDir>;
let path: string;
let store: SqliteJournalStore;
let registry: EventTypeRegistry;

beforeEach(() => {
  t = tempDir();
  path = join(t.dir, "j.db");
  store = SqliteJournalStore.open(path);
  registry = builtinEventTypes();
});
afterEach(async () => {
  await store.close();
  t.cleanup();
});

describe("appendBuilt: runtime-built bodies", () => {
  it("does not call the zod parse for a built-in body the runtime built; append() does", async () => {
    const check = vi.spyOn(registry, "check");
    const j = await openJournal({ store, signer: KEY, registry });
    await j.appendBuilt({ type: GATE_DECISION, run_id: RUN, trace_id: TRACE, body: gateDecision("deny") });
    await j.appendBuilt({ type: "ObservationsCollected", body: { observation_count: 3 } });
    expect(check).toHaveBeenCalledTimes(0);
    await j.append({ type: GATE_DECISION, run_id: RUN, trace_id: TRACE, body: gateDecision("allow") });
    expect(check).toHaveBeenCalledTimes(1);
    expect(await verifyJournal(store, keyringOf(KEY), { registry })).toMatchObject({ ok: true, checked: 3 });
  });

  it("a built body whose credentials were masked is checked again before it is stored", async () => {
    const check = vi.spyOn(registry, "check");
    const j = await openJournal({ store, signer: KEY, registry });
    const body = gateDecision("allow");
    body.parameters = { authorization: "Bearer abcdefghijklmnopqrstuvwxyz0123456789" };
    const e = await j.appendBuilt({ type: GATE_DECISION, run_id: RUN, trace_id: TRACE, body });
    expect(check).toHaveBeenCalledTimes(1);
    expect(JSON.stringify(e.body)).not.toContain("abcdefghijklmnopqrstuvwxyz");
  });

  it("a built body is serialised without a private copy, yet a __proto__ member or a lone surrogate is refused as by append()", async () => {
    const j = await openJournal({ store, signer: KEY, registry });
    const proto = gateDecision("allow");
    proto.parameters = JSON.parse('{"url":"https://api.example.com/","__proto__":{"admin":true}}');
    await expect(
      j.appendBuilt({ type: GATE_DECISION, run_id: RUN, trace_id: TRACE, body: proto }),
    ).rejects.toMatchObject({ code: "ERR_JOURNAL_BODY_INVALID" });
    const lone = gateDecision("allow");
    lone.parameters = { text: "a\ud800b" };
    await expect(
      j.appendBuilt({ type: GATE_DECISION, run_id: RUN, trace_id: TRACE, body: lone }),
    ).rejects.toMatchObject({ code: "ERR_JOURNAL_BODY_INVALID" });
    // Nothing of either was stored; a good one after them is entry 1 and verifies.
    const ok = await j.appendBuilt({
      type: GATE_DECISION,
      run_id: RUN,
      trace_id: TRACE,
      body: gateDecision("deny"),
    });
    expect(ok.seq).toBe(1);
    expect(await verifyJournal(store, keyringOf(KEY), { registry })).toMatchObject({ ok: true, checked: 1 });
  });

  it("still refuses what the compiler cannot see: bad ids, a non-object body, an unregistered type", async () => {
    const j = await openJournal({ store, signer: KEY, registry: new EventTypeRegistry() });
    await expect(
      j.appendBuilt({ type: "ObservationsCollected", body: { observation_count: 1 } }),
    ).rejects.toMatchObject({ code: "ERR_JOURNAL_TYPE_UNKNOWN" });
    const k = await openJournal({ store, signer: KEY });
    await expect(
      k.appendBuilt({ type: "ObservationsCollected", run_id: "has space", body: { observation_count: 1 } }),
    ).rejects.toMatchObject({ code: "ERR_JOURNAL_ENTRY_INVALID" });
    await expect(
      k.appendBuilt({ type: "ObservationsCollected", body: [] as unknown as { observation_count: number } }),
    ).rejects.toMatchObject({ code: "ERR_JOURNAL_BODY_INVALID" });
    // A body of the wrong type does not compile.
    // @ts-expect-error observation_count must be a number
    const wrong = () => k.appendBuilt({ type: "ObservationsCollected", body: { observation_count: "1" } });
    expect(typeof wrong).toBe("function");
    expect(await store.count()).toBe(0);
  });
});

describe("rows read back from disk are validated", () => {
  async function tamperedHead(sql: string): Promise<void> {
    const j = await openJournal({ store, signer: KEY });
    for (let i = 0; i < 3; i++)
      await j.append({ type: "ObservationsCollected", body: { observation_count: i } });
    await j.close();
    await store.close();
    const db = new Database(path);
    db.prepare(sql).run();
    db.close();
    store = SqliteJournalStore.open(path);
  }

  it("a head row whose key_id was changed on disk is refused: no read, no append chained on it", async () => {
    await tamperedHead("UPDATE journal_entries SET key_id = 'not a key id' WHERE seq = 3");
    await expect(store.last()).rejects.toMatchObject({ code: "ERR_JOURNAL_STORE" });
    await expect(store.get(3)).rejects.toMatchObject({ code: "ERR_JOURNAL_STORE" });
    await expect(
      store.appendBatch(() => {
        throw new Error("build must not be reached on a tampered head");
      }),
    ).rejects.toMatchObject({ code: "ERR_JOURNAL_STORE" });
    expect(await store.count()).toBe(3);
  });

  it("a row whose hash was changed on disk to a malformed one reads back as a MalformedRecord", async () => {
    await tamperedHead("UPDATE journal_entries SET hash = 'sha256:zz' WHERE seq = 2");
    const all = await collect(store);
    expect(all[1]).toBeInstanceOf(MalformedRecord);
    expect((all[1] as MalformedRecord).message).toContain("hash");
    expect(await store.query({})).toHaveLength(2);
    expect(await verifyJournal(store, keyringOf(KEY))).toMatchObject({
      ok: false,
      failure: { seq: 2, reason: "schema_invalid" },
    });
  });
});

describe("a Sealer of one's own", () => {
  it("seals each committed batch once; what it seals verifies", async () => {
    let seals = 0;
    const counting: Sealer = {
      ...batchSealer,
      seal: (c) => {
        seals++;
        return batchSealer.seal(c);
      },
    };
    const j = await openJournal({ store, signer: KEY, sealer: counting });
    const before = store.commits;
    await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        j.append({ type: "ObservationsCollected", body: { observation_count: i } }),
      ),
    );
    expect(seals).toBe(store.commits - before);
    expect(seals).toBeLessThan(100);
    expect(await verifyJournal(store, keyringOf(KEY))).toMatchObject({ ok: true, checked: 100 });
  });
});
