// `warden journal verify` with --db repeated: per-replica chains (JSONL exports and a
// SQLite file) verified together, and one per-replica chain named in the one-input output.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { saveKeyPair } from "../../src/crypto/index.js";
import { entryJson, type JournalEntry } from "../../src/journal/index.js";
import { runCli } from "../helpers/cli.js";
import { checkpoint, closeAll, exported, observe, type Replica, replica } from "./chains-fixtures.js";
import { KEY, tempDir } from "./helpers.js";

let t: ReturnType<typeof tempDir>;
let pub: string;
let A: Replica;
let B: Replica;
let C: Replica;
const file: Record<string, string> = {};

const writeJsonl = (name: string, entries: readonly JournalEntry[]): string => {
  const path = join(t.dir, name);
  writeFileSync(path, entries.map((e) => `${entryJson(e)}\n`).join(""));
  return path;
};

// A (SQLite file): cp obs cp(B@3 C@2) — B: cp obs obs obs cp(A@3) obs — C: cp obs cp(A@3 B@5)
beforeAll(async () => {
  t = tempDir("warden-journal-chains-cli-");
  pub = saveKeyPair(KEY, t.dir, { name: "journal" }).publicPem;
  file.a = join(t.dir, "a.db");
  [A, B, C] = [await replica("A", KEY, file.a), await replica("B"), await replica("C")];
  await observe(A, 1);
  await observe(B, 1);
  await observe(B, 2);
  await observe(C, 1);
  await checkpoint(A, "A", { B, C });
  await observe(B, 3);
  await checkpoint(B, "B", { A });
  await checkpoint(C, "C", { A, B });
  await observe(B, 4);
  const b = await exported(B);
  file.b = writeJsonl("b.jsonl", b);
  file.c = writeJsonl("c.jsonl", await exported(C));
  file.bCut = writeJsonl("b-cut.jsonl", b.slice(0, 4));
});
afterAll(async () => {
  await closeAll(A, B, C);
  t.cleanup();
});

const verify = (...args: string[]) => runCli("journal", "verify", ...args, "--keys", pub);

describe("warden journal verify --db … --db …", () => {
  it("verifies intact chains together (exit 0) and lists each chain with its file", async () => {
    const r = await verify("--db", file.a!, "--db", file.b!, "--db", file.c!);
    expect(r).toMatchObject({ code: 0, err: "" });
    expect(r.out).toMatch(/^journal chains intact: 3 chains, 6 checkpoints, 5 references checked\n/);
    expect(r.out).toContain(`chain "B": 6 entries, head seq 6 sha256:`);
    expect(r.out).toContain(`[${file.a}]`);
    const json = await verify("--db", file.a!, "--db", file.b!, "--db", file.c!, "--json");
    const report = JSON.parse(json.out) as { ok: boolean; chains: { name: string; file: string }[] };
    expect(report.ok).toBe(true);
    expect(report.chains.map((c) => [c.name, c.file])).toEqual([
      ["A", file.a],
      ["B", file.b],
      ["C", file.c],
    ]);
  });

  it("exits 1 when a chain was cut below another chain's checkpoint, naming both", async () => {
    const r = await verify("--db", file.a!, "--db", file.bCut!, "--db", file.c!);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^journal chains verification FAILED\n/);
    expect(r.out).toContain(
      `chain "B" at seq 5: checkpoint_unmatched: checkpoint at "C" seq 3 names "B" seq 5`,
    );
    const json = JSON.parse(
      (await verify("--db", file.a!, "--db", file.bCut!, "--db", file.c!, "--json")).out,
    );
    expect(json).toMatchObject({
      ok: false,
      failures: [{ reason: "checkpoint_unmatched", chain: "B", seq: 5, by: { chain: "C", seq: 3 } }],
    });
  });

  it("exits 1 when a chain another chain saw is left out, or given twice", async () => {
    const missing = await verify("--db", file.a!, "--db", file.c!);
    expect(missing.code).toBe(1);
    expect(missing.out).toMatch(/chain "B" at seq 3: chain_missing: checkpoint at "A" seq 3/);
    const twice = await verify("--db", file.a!, "--db", file.b!, "--db", file.b!, "--db", file.c!);
    expect(twice.code).toBe(1);
    expect(twice.out).toContain(`chain "B" at seq 1: chain_duplicate: chain "B" is also input 1 [${file.b}]`);
  });

  it("checks approver signatures in every chain when asked", async () => {
    const alice = saveKeyPair(KEY, t.dir, { name: "alice" }).publicPem;
    const r = await verify(
      "--db",
      file.b!,
      "--db",
      file.a!,
      "--db",
      file.c!,
      "--approver-keys",
      `alice=${alice}`,
    );
    expect(r.code).toBe(0);
    expect(r.out).toContain(`approvals: 0 HITL records signed by their approvers [${file.c}]`);
  });

  it("names the chain of a single per-replica chain", async () => {
    const r = await verify("--db", file.b!);
    expect(r).toMatchObject({ code: 0 });
    expect(r.out).toMatch(/^journal intact \(chain "B"\): 6 entries, head seq 6 sha256:/);
    expect(JSON.parse((await verify("--db", file.a!, "--json")).out)).toMatchObject({ ok: true, chain: "A" });
    const cut = await verify("--db", file.bCut!);
    expect(cut.code).toBe(0); // alone, a cut at the end is still a valid chain
  });

  it.each([
    [["--db", "A", "--db", "B", "--expect-head", "HEAD"], "ERR_CLI_USAGE"],
    [["--db", "A", "--url", "postgres://127.0.0.1/x"], "ERR_CLI_USAGE"],
    [["--db", "A", "--db", "/nonexistent.jsonl"], "ERR_CLI_INPUT"],
  ])("refuses %j with %s (exit 2)", async (args, code) => {
    writeFileSync(join(t.dir, "head.json"), "{}");
    const r = await verify(
      ...args.map((x) =>
        x === "A" ? file.a! : x === "B" ? file.b! : x === "HEAD" ? join(t.dir, "head.json") : x,
      ),
    );
    expect(r.code).toBe(2);
    expect(r.err).toContain(code);
  });
});
