// docs/journal.md §8.3's hex dump is the segment a real journal writes: the first entry
// of §1.1's worked example (RFC 8032's test key 1, a published key; entry mode) in a
// segment of its own, rebuilt here byte for byte and compared with the dump in the doc.
import { createPrivateKey } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { keyPairFromPrivate } from "../../src/crypto/index.js";
import { openJournal, SegmentJournalStore, segmentDir } from "../../src/journal/index.js";
import { REPO_ROOT } from "../helpers/repo.js";
import { tempDir } from "./helpers.js";

/** `xxd`-style lines: offset, 16 bytes in hex, their printable ASCII. */
function hexDump(buf: Buffer): string[] {
  const lines: string[] = [];
  for (let at = 0; at < buf.length; at += 16) {
    const row = buf.subarray(at, at + 16);
    const hex = [...row].map((b) => b.toString(16).padStart(2, "0")).join(" ");
    const text = [...row].map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : ".")).join("");
    lines.push(`${at.toString(16).padStart(8, "0")}: ${hex.padEnd(47)}  ${text}`);
  }
  return lines;
}

/** The dump lines of §8.3 as [offset, hex bytes] (annotations after the ASCII column left out). */
function documented(): { bytes: number; rows: Map<number, string> } {
  const doc = readFileSync(join(REPO_ROOT, "docs/journal.md"), "utf8");
  const section = doc.slice(doc.indexOf("### 8.3 Example"), doc.indexOf("### 8.4"));
  const bytes = Number(/in a segment of its own, (\d+) bytes/.exec(section)?.[1]);
  const rows = new Map<number, string>();
  for (const m of section.matchAll(/^([0-9a-f]{8}): ((?:[0-9a-f]{2} ?){1,16})/gm))
    rows.set(Number.parseInt(m[1]!, 16), m[2]!.trim());
  return { bytes, rows };
}

it("the hex dump of docs/journal.md §8.3 is byte for byte the segment a journal writes", async () => {
  const d = Buffer.from("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", "hex");
  const x = Buffer.from("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "hex");
  const jwk = { kty: "OKP", crv: "Ed25519", d: d.toString("base64url"), x: x.toString("base64url") };
  const signer = keyPairFromPrivate(createPrivateKey({ key: jwk, format: "jwk" }));
  const t = tempDir();
  const path = join(t.dir, "example.db");
  const store = SegmentJournalStore.open(path);
  const j = await openJournal({ store, signer, now: () => new Date("2026-01-02T03:04:05.678Z") });
  await j.append({ type: "ObservationsCollected", run_id: "run-1", body: { observation_count: 0 } });
  await j.close();
  await store.close();
  const seg = readdirSync(segmentDir(path)).find((f) => f.endsWith(".wjs"))!;
  const buf = readFileSync(join(segmentDir(path), seg));
  t.cleanup();
  const real = hexDump(buf);
  const doc = documented();
  const shown = real.map((l) => `${l.slice(0, 58)}`.trimEnd()).join("\n");
  expect(doc.bytes, `the segment is ${buf.length} bytes:\n${real.join("\n")}`).toBe(buf.length);
  expect(doc.rows.size).toBeGreaterThan(8);
  for (const [offset, hex] of doc.rows) {
    const line = real[offset / 16];
    expect(line?.slice(10, 10 + hex.length), `row ${offset.toString(16)} of:\n${shown}`).toBe(hex);
  }
});
