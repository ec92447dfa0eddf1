// The pipelined writer across processes: child processes with signing workers
// append to one SQLite file, are SIGKILLed at random moments, or race each other.
// Chunks are chained on a predicted head before the write lock is taken, so these
// are the cases where a prediction is wrong or a process dies with chunks signed
// but not committed: the journal must verify and hold every acknowledged entry.
// The children run a private build (not dist/, which other tests rebuild).
import { execFileSync } from "node:child_process";
import { existsSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPair, saveKeyPair } from "../../src/crypto/index.js";
import { REPO_ROOT } from "../helpers/repo.js";
import { type ChildWriter, spawnWriter, verifyJournalFile } from "./child-writer.js";
import { tempDir } from "./helpers.js";

const APPENDER = resolve(REPO_ROOT, "test/fixtures/journal/appender.mjs");
const key = generateKeyPair("ed25519");
let t: ReturnType<typeof tempDir>;
let build: string;
let keyFile: string;

beforeAll(() => {
  t = tempDir("warden-pipeline-");
  build = join(t.dir, "build");
  try {
    execFileSync(
      process.execPath,
      [resolve(REPO_ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json", "--outDir", build],
      { cwd: REPO_ROOT, stdio: "pipe" },
    );
  } catch {
    // Type errors elsewhere in the tree do not stop tsc from emitting; the check below decides.
  }
  expect(existsSync(join(build, "src/journal/index.js"))).toBe(true);
  writeFileSync(join(build, "package.json"), '{"type":"module"}\n');
  symlinkSync(resolve(REPO_ROOT, "node_modules"), join(build, "node_modules"), "dir");
  keyFile = saveKeyPair(key, t.dir).privatePem;
}, 120_000);
afterAll(() => t.cleanup());

function start(
  db: string,
  count: number,
  inflight: number,
  tag: string,
  workers: number,
  startAt: number | "stdin" = 0,
  paceMs = 0,
): ChildWriter {
  return spawnWriter(
    APPENDER,
    [
      build,
      db,
      keyFile,
      String(count),
      String(inflight),
      tag,
      String(workers),
      String(startAt),
      String(paceMs),
    ],
    startAt === "stdin",
  );
}

describe("pipelined writers in processes", () => {
  it("a pipelined writer SIGKILLed at random moments leaves a journal that verifies and holds every acknowledged entry", async () => {
    const db = join(t.dir, "crash.db");
    let acknowledged = 0;
    for (let i = 0; i < 12; i++) {
      // Wide bursts keep chunks signed but uncommitted at most moments.
      const run = start(db, 0, i % 2 === 0 ? 256 : 16, `k${i}`, 2);
      await run.firstAck;
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 150)));
      run.child.kill("SIGKILL");
      const { signal, stderr } = await run.exited;
      expect(signal, stderr).toBe("SIGKILL");
      const { report, seqs } = await verifyJournalFile(db, key);
      expect(report.ok, JSON.stringify(report)).toBe(true);
      expect(run.acked.filter((s) => !seqs.has(s))).toEqual([]);
      acknowledged += run.acked.length;
    }
    expect(acknowledged).toBeGreaterThan(12);
  });

  it("two pipelined processes on one file never fork the chain or duplicate a seq", async () => {
    const db = join(t.dir, "two.db");
    const per = 1500;
    // Released together once both are open (start-up time on a loaded machine does not
    // count), each pausing 1 ms after an acknowledged append so the other process's busy
    // handler gets the write lock between transactions.
    const a = start(db, per, 128, "a", 2, "stdin", 1);
    const b = start(db, per, 128, "b", 1, "stdin", 1);
    await Promise.all([a.ready, b.ready]);
    a.go();
    b.go();
    const [ea, eb] = await Promise.all([a.exited, b.exited]);
    expect(ea.code, ea.stderr).toBe(0);
    expect(eb.code, eb.stderr).toBe(0);
    const { report, seqs } = await verifyJournalFile(db, key);
    expect(report).toMatchObject({ ok: true, checked: 2 * per });
    expect(seqs.size).toBe(2 * per);
    const all = [...a.acked, ...b.acked].sort((x, y) => x - y);
    expect(all).toEqual(Array.from({ length: 2 * per }, (_, i) => i + 1));
    expect(Math.min(...b.acked)).toBeLessThan(Math.max(...a.acked));
    expect(Math.min(...a.acked)).toBeLessThan(Math.max(...b.acked));
  });
});
