import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  buildToolRequest,
  canonicalJson,
  hasErrorCode,
  sha256Of,
  uuidv7,
} from "../../src/contracts/index.js";
import { generateKeyPair } from "../../src/crypto/index.js";
import {
  builtinEventTypes,
  EventTypeRegistry,
  entryHash,
  GENESIS_HASH,
  hashedText,
  type Journal,
  type JournalEntry,
  openJournal,
  SqliteJournalStore,
  signedText,
  verifyJournal,
} from "../../src/journal/index.js";
import { gateDecision, KEY, keyringOf, OTHER_KEY, policyDecision, RUN, TRACE, tempDir } from "./helpers.js";

let t: ReturnType<typeof tempDir>;
let store: SqliteJournalStore;
let journal: Journal;

beforeEach(async () => {
  t = tempDir();
  store = SqliteJournalStore.open(join(t.dir, "j.db"));
  journal = await openJournal({ store, signer: KEY });
});
afterEach(async () => {
  await store.close();
  t.cleanup();
});

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    return (err as { code?: string }).code;
  }
}

function toolRequest(payload: unknown) {
  return buildToolRequest({
    run_id: RUN,
    trace_id: TRACE,
    tenant_id: "tenant-1",
    environment: "test",
    agent: {
      agent_instance_id: "spiffe://org/agent/planner#r1",
      agent_name: "planner",
      agent_version: "2.1.0",
      identity: { subject: "spiffe://org/agent/planner", attested: true },
    },
    tool: { name: "crm.update_contact", category: "reversible_write", risk_tier: "medium" },
    inputs: { payload: payload as never },
    bundles: { policy_bundle_hash: sha256Of({ p: 1 }), tool_schema_hash: sha256Of({ t: 1 }) },
  } as never);
}

describe("entry format", () => {
  it("links seq 1 to the genesis value and each entry to the previous hash", async () => {
    const a = await journal.append({
      type: "ObservationsCollected",
      run_id: RUN,
      trace_id: TRACE,
      body: { observation_count: 1 },
    });
    const b = await journal.append({
      type: "LoopTerminated",
      run_id: RUN,
      body: { reason: "done", iterations: 3 },
    });
    expect(a.seq).toBe(1);
    expect(a.prev_hash).toBe(GENESIS_HASH);
    expect(GENESIS_HASH).toBe(`sha256:${"0".repeat(64)}`);
    expect(b).toMatchObject({ seq: 2, prev_hash: a.hash, trace_id: null, key_id: KEY.keyId });
  });

  it("hashes and signs exactly the canonical JSON the docs describe", async () => {
    const e = await journal.append({
      type: "dare.policy.decision",
      run_id: RUN,
      trace_id: TRACE,
      body: policyDecision(),
    });
    const { hash, signature, ...unhashed } = e;
    expect(hashedText(e, canonicalJson(e.body))).toBe(canonicalJson(unhashed));
    expect(signedText(e, canonicalJson(e.body))).toBe(canonicalJson({ ...unhashed, hash }));
    expect(hash).toBe(sha256Of(unhashed));
    expect(entryHash(e, canonicalJson(e.body))).toBe(hash);
    const { verify } = await import("node:crypto");
    expect(
      verify(
        null,
        Buffer.from(canonicalJson({ ...unhashed, hash })),
        KEY.publicKey,
        Buffer.from(signature, "base64url"),
      ),
    ).toBe(true);
  });

  it("gives every entry of a batch the batch's time, in ISO UTC with milliseconds", async () => {
    const fixed = new Date("2026-01-02T03:04:05.678Z");
    const j = await openJournal({ store, signer: KEY, now: () => fixed });
    const e = await j.append({ type: "ObservationsCollected", body: { observation_count: 0 } });
    expect(e.time).toBe("2026-01-02T03:04:05.678Z");
  });
});

describe("append rejects bad input before it queues", () => {
  it.each([
    [{ type: "no spaces allowed", body: {} }, "ERR_JOURNAL_TYPE_INVALID"],
    [{ type: "warden.journal.key_rotated", body: {} }, "ERR_JOURNAL_TYPE_INVALID"],
    [{ type: "acme.custom", body: {} }, "ERR_JOURNAL_TYPE_UNKNOWN"],
    [{ type: "ObservationsCollected", body: { observation_count: -1 } }, "ERR_JOURNAL_BODY_INVALID"],
    [
      { type: "dare.policy.decision", body: { ...policyDecision(), event_type: "dare.tool.request" } },
      "ERR_JOURNAL_BODY_INVALID",
    ],
    [{ type: "ObservationsCollected", body: [1, 2] }, "ERR_JOURNAL_BODY_INVALID"],
    [{ type: "ObservationsCollected", body: new Map() }, "ERR_JOURNAL_BODY_INVALID"],
    [
      { type: "ObservationsCollected", body: { observation_count: 1, x: Number.NaN } },
      "ERR_JOURNAL_BODY_INVALID",
    ],
    [
      { type: "ObservationsCollected", body: { observation_count: 1, x: "\ud800" } },
      "ERR_JOURNAL_BODY_INVALID",
    ],
    [
      { type: "ObservationsCollected", body: JSON.parse('{"observation_count":1,"__proto__":{"x":1}}') },
      "ERR_JOURNAL_BODY_INVALID",
    ],
    [
      { type: "ObservationsCollected", run_id: "has space", body: { observation_count: 1 } },
      "ERR_JOURNAL_ENTRY_INVALID",
    ],
    [
      { type: "ObservationsCollected", run_id: "", body: { observation_count: 1 } },
      "ERR_JOURNAL_ENTRY_INVALID",
    ],
    [
      { type: "ObservationsCollected", trace_id: "0".repeat(32), body: { observation_count: 1 } },
      "ERR_JOURNAL_ENTRY_INVALID",
    ],
    [
      { type: "ObservationsCollected", trace_id: "ABC", body: { observation_count: 1 } },
      "ERR_JOURNAL_ENTRY_INVALID",
    ],
  ])("case %# is refused", async (input, code) => {
    expect(await codeOf(journal.append(input as never))).toBe(code);
    expect(await store.count()).toBe(0);
  });

  it("accepts unregistered types only when asked, and registered extensions always", async () => {
    const open = await openJournal({ store, signer: KEY, allowUnknownTypes: true });
    await expect(open.append({ type: "acme.custom", body: { anything: [1] } })).resolves.toMatchObject({
      seq: 1,
    });
    const registry = builtinEventTypes();
    registry.register("acme.deploy", z.strictObject({ service: z.string() }));
    const typed = await openJournal({ store, signer: KEY, registry });
    expect(await codeOf(typed.append({ type: "acme.deploy", body: { service: 1 } }))).toBe(
      "ERR_JOURNAL_BODY_INVALID",
    );
    await expect(typed.append({ type: "acme.deploy", body: { service: "api" } })).resolves.toMatchObject({
      seq: 2,
    });
    expect(() => registry.register("acme.deploy", z.object({}))).toThrow(
      expect.objectContaining({ code: "ERR_JOURNAL_TYPE_EXISTS" }),
    );
    expect(() => registry.register("bad type", z.object({}))).toThrow(
      expect.objectContaining({ code: "ERR_JOURNAL_TYPE_INVALID" }),
    );
  });

  // This file never imports src/gate: the warden.gate.* schemas must come with the built-in types.
  it("the built-in types check warden.gate.* bodies without the Gate layer loaded", async () => {
    const registry = builtinEventTypes();
    expect(registry.types()).toEqual(
      expect.arrayContaining(["warden.gate.decision", "warden.gate.resolution", "warden.gate.result"]),
    );
    expect(registry.check("warden.gate.decision", gateDecision("step_up"), false)).toEqual({ ok: true });
    const forged = gateDecision("allow");
    forged.dare.result.decision = "deny";
    const bad = registry.check("warden.gate.decision", forged, false);
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.message).toContain("dare.result.decision");
    expect(registry.check("warden.gate.decision", { decision: "deny" }, false).ok).toBe(false);
    expect(
      registry.check(
        "warden.gate.resolution",
        { decision_id: "d", resolved: "deny", via: "approval", outcome: "timeout", reason_codes: [] },
        false,
      ),
    ).toEqual({ ok: true });
    expect(registry.check("warden.gate.resolution", { decision_id: "d", resolved: "maybe" }, false).ok).toBe(
      false,
    );
    expect(
      registry.check("warden.gate.result", { decision_id: "d", classification: "public", taint: [] }, false),
    ).toEqual({ ok: true });
    expect(registry.check("warden.gate.result", { decision_id: "d", taint: [] }, false).ok).toBe(false);

    // The process-wide registry journals use by default refuses the forged body on append.
    expect(await codeOf(journal.append({ type: "warden.gate.decision", body: forged }))).toBe(
      "ERR_JOURNAL_BODY_INVALID",
    );
    expect(await store.count()).toBe(0);

    // A writer that does not know the type (empty registry, unknown types allowed) writes a
    // good entry and then a forged one; a verifier given only builtinEventTypes() accepts the
    // good prefix and rejects the forged entry.
    const blind = await openJournal({
      store,
      signer: KEY,
      registry: new EventTypeRegistry(),
      allowUnknownTypes: true,
    });
    await blind.append({ type: "warden.gate.decision", body: gateDecision("deny") });
    expect(await verifyJournal(store, keyringOf(KEY), { registry: builtinEventTypes() })).toMatchObject({
      ok: true,
      checked: 1,
    });
    await blind.append({ type: "warden.gate.decision", body: forged });
    const report = await verifyJournal(store, keyringOf(KEY), { registry: builtinEventTypes() });
    expect(report.ok).toBe(false);
    if (!report.ok) {
      expect(report.failure.seq).toBe(2);
      expect(report.failure.message).toContain("dare.result.decision");
    }
  });

  it("refuses a P-256 signer and a public key (ERR_JOURNAL_KEY_TYPE)", async () => {
    const p256 = generateKeyPair("p256");
    expect(await codeOf(openJournal({ store, signer: p256 }))).toBe("ERR_JOURNAL_KEY_TYPE");
    expect(await codeOf(openJournal({ store, signer: { ...KEY, privateKey: KEY.publicKey } }))).toBe(
      "ERR_JOURNAL_KEY_TYPE",
    );
    expect(await codeOf(journal.rotateKey(p256))).toBe("ERR_JOURNAL_KEY_TYPE");
  });

  it("refuses to append with a key that is not the chain's (ERR_JOURNAL_KEY_MISMATCH)", async () => {
    await journal.append({ type: "ObservationsCollected", body: { observation_count: 1 } });
    expect(await codeOf(openJournal({ store, signer: OTHER_KEY }))).toBe("ERR_JOURNAL_KEY_MISMATCH");
    // Also when the mismatch appears after opening (another writer rotated).
    const stale = await openJournal({ store, signer: KEY });
    await journal.rotateKey(OTHER_KEY);
    expect(
      await codeOf(stale.append({ type: "ObservationsCollected", body: { observation_count: 2 } })),
    ).toBe("ERR_JOURNAL_KEY_MISMATCH");
    expect(await store.count()).toBe(2);
  });

  it("refuses appends after close (ERR_JOURNAL_CLOSED) but finishes queued ones", async () => {
    const pending = journal.append({ type: "ObservationsCollected", body: { observation_count: 1 } });
    await journal.close();
    await expect(pending).resolves.toMatchObject({ seq: 1 });
    expect(
      await codeOf(journal.append({ type: "ObservationsCollected", body: { observation_count: 2 } })),
    ).toBe("ERR_JOURNAL_CLOSED");
  });

  it("does not keep a reference to the caller's body", async () => {
    const body = { observation_count: 1, nested: { a: 1 } };
    const p = journal.append({ type: "ObservationsCollected", body });
    body.nested.a = 2;
    expect((await p).body).toEqual({ observation_count: 1, nested: { a: 1 } });
  });
});

describe("group commit", () => {
  it("commits many concurrent appends into one contiguous, verifiable chain", async () => {
    const results = await Promise.all(
      Array.from({ length: 1200 }, (_, i) =>
        journal.append({
          type: "ObservationsCollected",
          run_id: `r-${i % 7}`,
          body: { observation_count: i },
        }),
      ),
    );
    expect(results.map((e) => e.seq)).toEqual(Array.from({ length: 1200 }, (_, i) => i + 1));
    // Each append resolved with its own body, in call order.
    expect(results.every((e, i) => e.body.observation_count === i)).toBe(true);
    expect(new Set(results.map((e) => e.time)).size).toBeLessThan(1200);
    expect(await verifyJournal(store, keyringOf(KEY))).toMatchObject({ ok: true, checked: 1200 });
  });

  it("rejects every append of a batch whose transaction fails, and recovers after", async () => {
    const other = SqliteJournalStore.open(store.path);
    const rotated = await openJournal({ store: other, signer: KEY });
    await rotated.rotateKey(OTHER_KEY);
    const batch = await Promise.allSettled([
      journal.append({ type: "ObservationsCollected", body: { observation_count: 1 } }),
      journal.append({ type: "ObservationsCollected", body: { observation_count: 2 } }),
    ]);
    expect(
      batch.map((r) =>
        r.status === "rejected" && hasErrorCode(r.reason, "ERR_JOURNAL_KEY_MISMATCH") ? "mismatch" : r.status,
      ),
    ).toEqual(["mismatch", "mismatch"]);
    await expect(
      rotated.append({ type: "ObservationsCollected", body: { observation_count: 3 } }),
    ).resolves.toMatchObject({ seq: 2 });
    await other.close();
  });
});

describe("sensitive payloads and credentials", () => {
  const ref = {
    uri: "protected://payloads/abc",
    encryption: "kms:key-1",
    classification: "confidential" as const,
  };

  it("stores a DARE payload marked sensitive as payload_hash + payload_ref, never in clear", async () => {
    const payload = { contact_id: "123", email: "alice@example.com" };
    const req = toolRequest(payload);
    const e = await journal.append({
      type: "dare.tool.request",
      run_id: RUN,
      trace_id: TRACE,
      body: req,
      sensitive: [{ path: "/inputs/payload", ref }],
    });
    expect(e.body.inputs).toEqual({
      content_type: "application/json",
      payload_hash: sha256Of(payload),
      payload_ref: ref,
    });
    expect(JSON.stringify(e)).not.toContain("alice@example.com");
    const row = JSON.stringify(await store.get(1));
    expect(row).not.toContain("alice");
    // request_hash binds the payload hash, so the stored record still validates and verifies.
    expect(e.body.hashes).toEqual(req.hashes);
    expect(await verifyJournal(store, keyringOf(KEY))).toMatchObject({ ok: true });
  });

  it("replaces any other marked member by { payload_hash, payload_ref }", async () => {
    const e = await journal.append({
      type: "LoopStarted",
      body: { agent_id: "planner", request: "summarize the patient record of J. Doe" },
      sensitive: [{ path: "/request", ref }],
    });
    expect(e.body).toEqual({
      agent_id: "planner",
      request: { payload_hash: sha256Of("summarize the patient record of J. Doe"), payload_ref: ref },
    });
  });

  it.each([
    ["names no member", { path: "/nope", ref }],
    ["is not a pointer", { path: "request", ref }],
    ["has an invalid ref", { path: "/request", ref: { uri: "" } }],
    ["breaks the type's schema", { path: "/agent_id", ref }],
  ])("refuses a sensitive mark that %s (ERR_JOURNAL_SENSITIVE_PATH)", async (_why, mark) => {
    const p = journal.append({
      type: "LoopStarted",
      body: { agent_id: "planner", request: "x" },
      sensitive: [mark as never],
    });
    expect(await codeOf(p)).toBe("ERR_JOURNAL_SENSITIVE_PATH");
  });

  it("masks credentials before the entry is sealed, and reports where", async () => {
    const seen: unknown[] = [];
    const j = await openJournal({ store, signer: KEY, onRedaction: (type, r) => seen.push({ type, r }) });
    const e = await j.append({
      type: "RecoveryTriggered",
      body: {
        strategy: "retry",
        error: {
          message: "401 for Authorization: Bearer 2YotnFZFEjr1zCsicMWpAA",
          url: "https://svc:pa55w0rd@api.internal/v1",
        },
      },
    });
    const text = JSON.stringify(e);
    expect(text).not.toContain("2YotnFZFEjr1zCsicMWpAA");
    expect(text).not.toContain("pa55w0rd");
    expect(seen).toEqual([
      {
        type: "RecoveryTriggered",
        r: [
          { path: "/error/message", kind: "bearer_token" },
          { path: "/error/url", kind: "url_password" },
        ],
      },
    ]);
    expect(await verifyJournal(store, keyringOf(KEY))).toMatchObject({ ok: true });
  });

  it("refuses a clear DARE payload holding a credential: masking would break its payload_hash", async () => {
    const req = toolRequest({ api_key_header: "sk-proj-T3BlbkFJq8x2Vb7aR9mZ1cD4eF5gH6iJ7kL8mN9oP0qR" });
    expect(await codeOf(journal.append({ type: "dare.tool.request", body: req }))).toBe(
      "ERR_JOURNAL_BODY_INVALID",
    );
    // Marked sensitive, the same record is accepted and the key never stored.
    const e = await journal.append({
      type: "dare.tool.request",
      body: req,
      sensitive: [{ path: "/inputs/payload", ref }],
    });
    expect(JSON.stringify(e)).not.toContain("sk-proj-");
  });
});

describe("reads", () => {
  it("reports the head and reopens onto the same chain", async () => {
    expect(await journal.head()).toBeNull();
    const e: JournalEntry = await journal.append({
      type: "ObservationsCollected",
      body: { observation_count: 1 },
    });
    expect(await journal.head()).toEqual({ seq: 1, hash: e.hash, time: e.time, key_id: KEY.keyId });
    const again = await openJournal({ store, signer: KEY });
    await expect(
      again.append({ type: "LoopTerminated", body: { reason: "ok", iterations: 1 } }),
    ).resolves.toMatchObject({
      seq: 2,
      prev_hash: e.hash,
    });
    expect(uuidv7()).toBeTypeOf("string");
  });
});

describe("parallel signing", () => {
  it("signs batches in workers, across a rotation, and re-chains when another writer moved the head", async () => {
    const par = await openJournal({ store, signer: KEY, signingWorkers: 2 });
    const other = SqliteJournalStore.open(store.path);
    const rival = await openJournal({ store: other, signer: KEY });
    try {
      const body = (i: number) => ({ observation_count: i });
      const first = await Promise.all(
        Array.from({ length: 300 }, (_, i) => par.append({ type: "ObservationsCollected", body: body(i) })),
      );
      expect(first.at(-1)!.seq).toBe(300);
      // Interleave a rival writer with parallel-signed batches: both must land on one chain.
      const mixed = await Promise.all([
        ...Array.from({ length: 200 }, (_, i) =>
          par.append({ type: "ObservationsCollected", body: body(i) }),
        ),
        ...Array.from({ length: 50 }, (_, i) =>
          rival.append({ type: "ObservationsCollected", body: body(i) }),
        ),
      ]);
      expect(new Set(mixed.map((e) => e.seq)).size).toBe(250);
      const rot = par.rotateKey(OTHER_KEY);
      const after = par.append({ type: "ObservationsCollected", body: body(1) });
      expect((await rot).key_id).toBe(KEY.keyId);
      expect((await after).key_id).toBe(OTHER_KEY.keyId);
      const later = await Promise.all(
        Array.from({ length: 100 }, (_, i) => par.append({ type: "ObservationsCollected", body: body(i) })),
      );
      expect(later.every((e) => e.key_id === OTHER_KEY.keyId)).toBe(true);
      expect(await verifyJournal(store, keyringOf(KEY))).toMatchObject({ ok: true, checked: 652 });
    } finally {
      await par.close();
      await other.close();
    }
  });
});
