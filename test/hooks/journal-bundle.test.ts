// One-shot host hooks (one process per host event, each composing a runtime on the same
// journal) journal the policy bundle they load only when it is not the bundle this journal
// last recorded (issue 35, lean per-entry work): the same bundle, event after event, is one
// `warden.policy.bundle_loaded` entry. An auditor must still tell which bundle decided every
// decision: each decision names its bundle hash, a bundle change in the middle of a session
// is journaled before the first decision it makes, and a JSONL export says the same.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generateKeyPair, Keyring } from "../../src/crypto/index.js";
import {
  answerHostEvent,
  claudeCodeAdapter,
  createEngine,
  hostToolsPolicyPath,
} from "../../src/hooks/index.js";
import {
  exportJsonl,
  type JournalEntry,
  openEmbeddedStore,
  readJsonl,
  verifyJournal,
} from "../../src/journal/index.js";
import { claudeBash, journalEntriesAt as entriesOf, tempDir, WORKSPACE } from "./helpers.js";

const signer = generateKeyPair("ed25519");
const BUNDLE = "warden.policy.bundle_loaded";
const DECISION = "warden.gate.decision";

const hostEvent = (i: number) => claudeBash(`npm test -- --shard ${i}`);

/** The preset with one more rule: another bundle (another hash) deciding the same events. */
function changedPolicy(dir: string): string {
  const p = join(dir, "host-tools-changed.yaml");
  const extra = [
    "  - id: extra-deny-variant-marker",
    "    name: A variant's own rule",
    "    priority: 5",
    "    match:",
    "      toolClass: shell",
    "      parameters:",
    "        wardenCommand: { in: [true] }",
    "    decision: deny",
    "    reason: a variant bundle",
    "",
  ].join("\n");
  writeFileSync(p, `${readFileSync(hostToolsPolicyPath(), "utf8").trimEnd()}\n${extra}`);
  return p;
}

async function oneShot(path: string, i: number, extra: { policy?: string[]; shadowPolicy?: string[] } = {}) {
  const engine = await createEngine({ journal: { path, signer }, workspace: WORKSPACE, ...extra });
  try {
    await answerHostEvent(engine, claudeCodeAdapter, hostEvent(i), new Date().toISOString());
  } finally {
    await engine.close();
  }
}

/** A bundle entry's hash. */
const hashOf = (e: JournalEntry) => (e.body as { policy_bundle_hash: string }).policy_bundle_hash;
/** The bundle a decision names: its DARE record's (the one place a decision entry holds it). */
const dareHashOf = (e: JournalEntry) =>
  (e.body as { dare: { bundles: { policy_bundle_hash: string } } }).dare.bundles.policy_bundle_hash;

/** Every decision names a bundle, and the enforcing bundle last journaled before it is that one. */
function expectEveryDecisionNamesItsBundle(entries: readonly JournalEntry[]): void {
  let current: string | undefined;
  let decisions = 0;
  for (const e of entries) {
    if (e.type === BUNDLE && (e.body as { source?: string }).source !== "shadow") current = hashOf(e);
    if (e.type !== DECISION) continue;
    decisions++;
    expect(dareHashOf(e)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(current).toBe(dareHashOf(e));
  }
  expect(decisions).toBeGreaterThan(0);
}

async function verified(path: string): Promise<boolean> {
  const store = openEmbeddedStore(path, { readonly: true });
  try {
    return (await verifyJournal(store, new Keyring([signer.publicKey]))).ok;
  } finally {
    await store.close();
  }
}

describe("one-shot hooks journal the policy bundle when it changed, not once per process", () => {
  it("four one-shot events on one bundle write one bundle entry; every decision names that bundle", async () => {
    const path = join(tempDir(), "journal.db");
    for (let i = 0; i < 4; i++) await oneShot(path, i);
    const entries = await entriesOf(path);
    const bundles = entries.filter((e) => e.type === BUNDLE);
    expect(bundles).toHaveLength(1);
    expect(entries.filter((e) => e.type === DECISION)).toHaveLength(4);
    expectEveryDecisionNamesItsBundle(entries);
    expect(await verified(path)).toBe(true);
  });

  it("a bundle swapped in the middle of a session is journaled before its first decision, and so is the swap back", async () => {
    const dir = tempDir();
    const path = join(dir, "journal.db");
    const other = changedPolicy(dir);
    await oneShot(path, 0);
    await oneShot(path, 1);
    await oneShot(path, 2, { policy: [other] });
    await oneShot(path, 3, { policy: [other] });
    await oneShot(path, 4);
    const entries = await entriesOf(path);
    const bundles = entries.filter((e) => e.type === BUNDLE).map(hashOf);
    expect(bundles).toHaveLength(3);
    expect(bundles[0]).not.toBe(bundles[1]);
    expect(bundles[2]).toBe(bundles[0]);
    const decided = entries.filter((e) => e.type === DECISION).map(dareHashOf);
    expect(decided).toEqual([bundles[0], bundles[0], bundles[1], bundles[1], bundles[0]]);
    expectEveryDecisionNamesItsBundle(entries);
    expect(await verified(path)).toBe(true);
  });

  it("a JSONL export of a hook session names the deciding bundle for each decision", async () => {
    const dir = tempDir();
    const path = join(dir, "journal.db");
    await oneShot(path, 0);
    await oneShot(path, 1, { policy: [changedPolicy(dir)] });
    await oneShot(path, 2, { policy: [changedPolicy(dir)] });
    const out = join(dir, "export.jsonl");
    const store = openEmbeddedStore(path, { readonly: true });
    try {
      const lines: string[] = [];
      await exportJsonl(store, (chunk) => {
        lines.push(chunk);
      });
      writeFileSync(out, lines.join(""));
    } finally {
      await store.close();
    }
    const exported: JournalEntry[] = [];
    for await (const e of readJsonl(out)) exported.push(e as JournalEntry);
    expect(exported.filter((e) => e.type === BUNDLE)).toHaveLength(2);
    expectEveryDecisionNamesItsBundle(exported);
  });

  it("a shadow bundle's load is not taken for the enforcing bundle's record", async () => {
    const dir = tempDir();
    const path = join(dir, "journal.db");
    const shadowPolicy = [changedPolicy(dir)];
    await oneShot(path, 0, { shadowPolicy });
    await oneShot(path, 1, { shadowPolicy });
    const entries = await entriesOf(path);
    const enforcing = entries.filter((e) => e.type === BUNDLE && e.body.source !== "shadow");
    expect(enforcing).toHaveLength(1);
    expectEveryDecisionNamesItsBundle(entries);
  });
});
