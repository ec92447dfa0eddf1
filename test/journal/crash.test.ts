// Durability and multi-writer safety, for real: child processes append to the
// same SQLite file; some are SIGKILLed at random moments. Whatever happens, the
// journal must verify and hold every entry whose append resolved.
import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPair, saveKeyPair } from "../../src/crypto/index.js";
import { REPO_ROOT } from "../helpers/repo.js";
import { type ChildWriter, spawnWriter, verifyJournalFile } from "./child-writer.js";
import { tempDir } from "./helpers.js";

const APPENDER = resolve(REPO_ROOT, "test/fixtures/journal/appender.mjs");
const OPENER = resolve(REPO_ROOT, "test/fixtures/journal/opener.mjs");
const BUILT = resolve(REPO_ROOT, "dist/src/journal/index.js");
const key = generateKeyPair("ed25519");
let t: ReturnType<typeof tempDir>;
let keyFile: string;

function newestMtime(dir: string): number {
  return Math.max(...readdirSync(dir).map((f) => statSync(join(dir, f)).mtimeMs));
}

beforeAll(() => {
  // Child processes run the compiled journal; rebuild when the sources are newer.
  if (!existsSync(BUILT) || statSync(BUILT).mtimeMs < newestMtime(resolve(REPO_ROOT, "src/journal"))) {
    try {
      execFileSync("npx", ["tsc", "-p", "tsconfig.build.json"], { cwd: REPO_ROOT, stdio: "pipe" });
    } catch {
      // Type errors elsewhere in the tree do not stop tsc from emitting; the check below decides.
    }
  }
  expect(existsSync(BUILT)).toBe(true);
  t = tempDir("warden-crash-");
  keyFile = saveKeyPair(key, t.dir).privatePem;
});
afterAll(() => t.cleanup());

function startAppender(
  db: string,
  count: number,
  inflight: number,
  tag: string,
  startAt: number | "stdin" = 0,
  mode: "0" | "batch" | "batch+os" = "0",
  paceMs = 0,
): ChildWriter {
  return spawnWriter(
    APPENDER,
    [
      resolve(REPO_ROOT, "dist"),
      db,
      keyFile,
      String(count),
      String(inflight),
      tag,
      mode,
      String(startAt),
      String(paceMs),
    ],
    startAt === "stdin",
  );
}

describe.each(["0", "batch", "batch+os"] as const)("crash safety (signing: %s)", (mode) => {
  it("a writer SIGKILLed at random moments leaves a journal that verifies and holds every acknowledged entry", async () => {
    const db = join(t.dir, `crash-${mode.replace("+", "-")}.db`);
    let acknowledged = 0;
    const iterations = 24;
    for (let i = 0; i < iterations; i++) {
      // Alternate one-at-a-time appends and bursts that group-commit.
      const run = startAppender(db, 0, i % 2 === 0 ? 1 : 32, `k${i}`, 0, mode);
      await run.firstAck;
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 150)));
      run.child.kill("SIGKILL");
      const { signal, stderr } = await run.exited;
      expect(signal, stderr).toBe("SIGKILL");
      const { report, seqs } = await verifyJournalFile(db, key);
      expect(report.ok, JSON.stringify(report)).toBe(true);
      const missing = run.acked.filter((s) => !seqs.has(s));
      expect(missing).toEqual([]);
      acknowledged += run.acked.length;
    }
    expect(acknowledged).toBeGreaterThan(iterations);
    // The file, and the -wal and -shm a SIGKILLed writer leaves behind, were created
    // by the child processes: owner read/write only.
    for (const f of [db, `${db}-wal`, `${db}-shm`]) {
      expect((statSync(f).mode & 0o777).toString(8), f).toBe("600");
    }
  });
});

describe.each([
  ["0", "0"],
  ["batch", "0"],
  ["batch+os", "batch"],
] as const)("two processes on one file (signing: %s and %s)", (modeA, modeB) => {
  it("never fork the chain or duplicate a seq", async () => {
    const per = 400;
    // The race only proves something if the writers overlapped. Both are released together
    // once both are ready (start-up time does not count), but a loaded machine can still
    // schedule one writer through all its appends while the other waits: then the race is
    // run again on a new file, a bounded number of times. Every run, overlapped or not,
    // must pass the integrity checks.
    const attempts = 3;
    const runs: string[] = [];
    let interleaved = false;
    for (let attempt = 1; attempt <= attempts && !interleaved; attempt++) {
      const db = join(t.dir, `two-${modeA.replace("+", "-")}-${modeB}-${attempt}.db`);
      // A 1 ms pause after each acknowledged append lets the other process, waiting in
      // SQLite's busy handler, take the write lock between transactions (without it, one
      // writer was seen holding the lock through all its appends, run after run).
      const a = startAppender(db, per, 4, "a", "stdin", modeA, 1);
      const b = startAppender(db, per, 4, "b", "stdin", modeB, 1);
      await Promise.all([a.ready, b.ready]);
      a.go();
      b.go();
      const [ea, eb] = await Promise.all([a.exited, b.exited]);
      expect(ea.code, ea.stderr).toBe(0);
      expect(eb.code, eb.stderr).toBe(0);
      const { report, seqs } = await verifyJournalFile(db, key);
      expect(report).toMatchObject({ ok: true, checked: 2 * per });
      expect(seqs.size).toBe(2 * per);
      // Each writer got its own seqs, and together they cover 1..2*per exactly once.
      const all = [...a.acked, ...b.acked].sort((x, y) => x - y);
      expect(all).toEqual(Array.from({ length: 2 * per }, (_, i) => i + 1));
      // Did the writers really interleave (each appended while the other was running)?
      const [minA, maxA, minB, maxB] = [
        Math.min(...a.acked),
        Math.max(...a.acked),
        Math.min(...b.acked),
        Math.max(...b.acked),
      ];
      interleaved = minB < maxA && minA < maxB;
      runs.push(`run ${attempt}: a wrote seqs ${minA}..${maxA}, b ${minB}..${maxB}`);
    }
    expect(
      interleaved,
      `the two writers never overlapped in ${attempts} runs, so the race was not exercised (${runs.join("; ")})`,
    ).toBe(true);
  });
});

describe("processes creating the same new journal at once", () => {
  // Switching a new file to WAL can fail with SQLITE_BUSY at once (no busy wait) when another
  // process does the same at the same moment; open must wait like any other lock.
  it("all open it", async () => {
    const dir = join(t.dir, "opened");
    mkdirSync(dir);
    const count = 40;
    const startAt = Date.now() + 1500;
    const outputs = await Promise.all(
      [1, 2, 3].map(
        () =>
          new Promise<string>((res, rej) =>
            execFile(
              process.execPath,
              [OPENER, resolve(REPO_ROOT, "dist"), dir, String(count), String(startAt), "30"],
              (err, stdout, stderr) => (err ? rej(new Error(`${err.message}\n${stderr}`)) : res(stdout)),
            ),
          ),
      ),
    );
    const failures = outputs.flatMap((o) => o.trimEnd().split("\n")).filter((l) => l !== "ok");
    expect(failures).toEqual([]);
    expect(outputs.map((o) => o.trimEnd().split("\n").length)).toEqual([count, count, count]);
    // Whichever process won the race to create a file, it was created 0600.
    const modes = readdirSync(dir).map((f) => (statSync(join(dir, f)).mode & 0o777).toString(8));
    expect(modes.length).toBeGreaterThanOrEqual(count);
    expect(new Set(modes)).toEqual(new Set(["600"]));
  });
});
