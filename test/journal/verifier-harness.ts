// What the docs-only verifier's tests share: `warden journal verify` run as the real CLI
// in a child process (on one thread and on worker threads: the two must agree), and
// tampered copies of a journal's segments re-framed the way an attacker who knows §8
// would (docs-verifier.ts encodes them).
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Journal } from "../../src/journal/index.js";
import { REPO_ROOT } from "../helpers/repo.js";
import { type Batch, encodeSegment, type Head, readBatches, type Verdict } from "./docs-verifier.js";
import { gateDecision, policyDecision, RUN } from "./helpers.js";

/** `n` decision entries appended together (one group commit): policy decisions, allow or deny, and Gate decisions. */
export function appendDecisions(j: Journal, n: number): Promise<unknown> {
  return Promise.all(
    Array.from({ length: n }, (_, i) =>
      i % 2 === 0
        ? j.append({
            type: "dare.policy.decision",
            run_id: RUN,
            body: policyDecision(i % 3 ? "allow" : "deny"),
          })
        : j.append({ type: "warden.gate.decision", run_id: RUN, body: gateDecision() }),
    ),
  );
}

function run(dir: string, pubFile: string, headFile: string | null, workers: number): Verdict {
  const args = [resolve(REPO_ROOT, "bin/warden.js"), "journal", "verify", "--db", dir, "--keys", pubFile];
  args.push("--json", "--workers", String(workers));
  if (headFile !== null) args.push("--expect-head", headFile);
  let out: string;
  try {
    out = execFileSync(process.execPath, args, { encoding: "utf8" });
  } catch (err) {
    out = (err as { stdout: string }).stdout;
  }
  const r = JSON.parse(out) as { ok: boolean; checked: number; failure?: { seq: number; reason: string } };
  return r.ok
    ? { ok: true, checked: r.checked }
    : { ok: false, seq: r.failure!.seq, reason: r.failure!.reason };
}

/** `warden journal verify --json` on one thread and on 2 workers; throws when the two disagree. */
export function wardenVerify(dir: string, pubFile: string, scratch: string, head?: Head): Verdict {
  let headFile: string | null = null;
  if (head !== undefined) {
    headFile = join(scratch, `head-${Math.random()}.json`);
    writeFileSync(headFile, JSON.stringify(head));
  }
  const one = run(dir, pubFile, headFile, 0);
  const all = run(dir, pubFile, headFile, 2);
  if (JSON.stringify(one) !== JSON.stringify(all)) {
    throw new Error(`one thread says ${JSON.stringify(one)}, workers say ${JSON.stringify(all)}`);
  }
  return one;
}

export interface SegmentFile {
  file: string;
  first: number;
  batches: Batch[];
  /** The segment's format (§8.1), kept when the copy is re-encoded. */
  version: 1 | 2;
}

export const segmentFiles = (dir: string): string[] =>
  readdirSync(dir)
    .filter((f) => /^\d{20}\.wjs$/.test(f))
    .sort();

/** The segment files of a directory, their batches parsed (§8.2). */
export const readSegmentFiles = (dir: string): SegmentFile[] =>
  segmentFiles(dir).map((file) => {
    const first = Number(file.slice(0, 20));
    const { batches, version } = readBatches(readFileSync(join(dir, file)), first);
    return { file, first, batches, version };
  });

/** A copy of `real` (a segments directory) at `dir` with `edit` applied to the parsed batches of each file. */
export function tamperedCopy(real: string, dir: string, edit: (all: SegmentFile[]) => void): string {
  mkdirSync(dir);
  const files = readSegmentFiles(real);
  edit(files);
  for (const f of files) writeFileSync(join(dir, f.file), encodeSegment(f.first, f.batches, f.version));
  return dir;
}
