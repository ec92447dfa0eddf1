// The evidence store beside the journal: private (0700 / 0600), content-addressed,
// bounded, and every read re-hashed so a swapped file is reported, never served.
import { mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Sha256Hash } from "../../src/contracts/index.js";
import { EvidenceStore, snapshotUri } from "../../src/evidence/index.js";
import { sha256Bytes } from "../../src/evidence/store.js";

const journal = () => join(mkdtempSync(join(tmpdir(), "warden-store-")), "j.db");
const bytes = (s: string) => Buffer.from(s);

describe("evidence store", () => {
  it("creates a private directory and private files, named by the sha-256 of their bytes", () => {
    const j = journal();
    const s = EvidenceStore.open(j);
    const b = bytes("hello");
    s.put(b, sha256Bytes(b));
    expect(statSync(`${j}.evidence`).mode & 0o777).toBe(0o700);
    const [name] = readdirSync(`${j}.evidence/snapshots`);
    expect(`sha256:${name}`).toBe(sha256Bytes(b));
    expect(statSync(`${j}.evidence/snapshots/${name}`).mode & 0o777).toBe(0o600);
    expect(s.snapshot(sha256Bytes(b))).toMatchObject({ ok: true, bytes: b });
  });

  it("a snapshot whose bytes were replaced is reported tampered, never returned", () => {
    const j = journal();
    const s = EvidenceStore.open(j);
    const h = sha256Bytes(bytes("balance: 10"));
    s.put(bytes("balance: 10"), h);
    writeFileSync(`${j}.evidence/snapshots/${h.slice(7)}`, "balance: 10000");
    expect(s.snapshot(h)).toMatchObject({ ok: false, code: "ERR_EVIDENCE_SNAPSHOT_TAMPERED" });
  });

  it("is bounded: an object over the per-object or total limit is omitted, and counted", () => {
    const s = EvidenceStore.open(journal(), { maxObjectBytes: 8, maxBytes: 12 });
    const small = bytes("1234567");
    s.put(bytes("123456789"), sha256Bytes(bytes("123456789")));
    s.put(small, sha256Bytes(small));
    s.put(bytes("abcdefg"), sha256Bytes(bytes("abcdefg")));
    expect(s.omitted).toBe(2);
    expect(s.snapshot(sha256Bytes(small)).ok).toBe(true);
    expect(s.snapshot(sha256Bytes(bytes("abcdefg")))).toMatchObject({
      ok: false,
      code: "ERR_EVIDENCE_SNAPSHOT_MISSING",
    });
  });

  it("stores a bundle once and refuses to serve one whose bytes changed", () => {
    const j = journal();
    const s = EvidenceStore.open(j);
    const h = s.putBundle(bytes('{"a":1}'));
    expect(s.putBundle(bytes('{"a":1}'))).toBe(h);
    expect(readdirSync(`${j}.evidence/bundles`)).toHaveLength(1);
    writeFileSync(`${j}.evidence/bundles/${h.slice(7)}.json`, '{"a":2}');
    expect(() => s.bundle(h)).toThrow(expect.objectContaining({ code: "ERR_EVIDENCE_BUNDLE_TAMPERED" }));
  });

  it("refuses a name that is not a sha-256 hash (no path tricks)", () => {
    const s = EvidenceStore.open(journal());
    expect(() => s.snapshot("sha256:../../etc/passwd" as Sha256Hash)).toThrow(
      expect.objectContaining({ code: "ERR_EVIDENCE_STORE" }),
    );
  });

  it("snapshot URIs are immutable, per tool, content-addressed", () => {
    const h = sha256Bytes(bytes("x"));
    expect(snapshotUri("crm.update contact", h)).toBe(
      `immutable://snapshots/tool/crm.update%20contact/${h.slice(7)}`,
    );
  });
});
