// DARE conformance check 3: replay reproduces the run at the tool/memory boundary from the
// recorded snapshots and the pinned bundle — and refuses, naming the step, when either
// was tampered with.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliReplayHost } from "../../src/cli/replay-host.js";
import { replayRuns } from "../../src/evidence/index.js";
import { runCli } from "../helpers/cli.js";
import { type Recorded, recordedFileRun, STRICTER } from "./fixture.js";

const replay = (f: Recorded) => replayRuns({ db: f.db, keys: [f.pub], run: f.runId, host: cliReplayHost });

function snapshotOf(f: Recorded, content: string): string {
  const hex = createHash("sha256").update(content).digest("hex");
  return join(`${f.db}.evidence`, "snapshots", hex);
}

describe("warden replay (DARE check 3)", () => {
  it("a recorded run replays identical at every step through its pinned bundle", async () => {
    const f = await recordedFileRun();
    const [r] = await replay(f);
    expect(r!.counts).toEqual({ identical: 4, diverged: 0, failed: 0 });
    expect(r!.steps.map((s) => s.recorded.decision)).toEqual(["allow", "allow", "deny", "allow"]);
    expect(r!.bundleHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    const cli = await runCli("replay", f.runId, "--journal", f.db);
    expect(cli.code).toBe(0);
    expect(cli.out).toContain("4 identical, 0 diverged, 0 failed");
  });

  it("answers from snapshots, never the executor: the sandbox deleted after the run changes nothing", async () => {
    const f = await recordedFileRun();
    rmSync(join(f.dir, "sandbox"), { recursive: true });
    const [r] = await replay(f);
    expect(r!.counts.identical).toBe(4);
  });

  it("a policy file edited on disk after the run does not change the replay (the bundle is pinned)", async () => {
    const f = await recordedFileRun();
    writeFileSync(join(f.dir, "policy.yaml"), STRICTER);
    const [r] = await replay(f);
    expect(r!.counts.identical).toBe(4);
  });

  it("a tampered snapshot fails the step that used it (ERR_EVIDENCE_SNAPSHOT_TAMPERED, exit 1)", async () => {
    const f = await recordedFileRun();
    writeFileSync(snapshotOf(f, '{"items":["a","b"]}'), '{"items":["a","b","c"]}');
    const [r] = await replay(f);
    expect(r!.steps[1]).toMatchObject({
      step: 2,
      tool: "file_read",
      status: "failed",
      code: "ERR_EVIDENCE_SNAPSHOT_TAMPERED",
    });
    expect(r!.counts).toEqual({ identical: 3, diverged: 0, failed: 1 });
    const cli = await runCli("replay", f.runId, "--journal", f.db);
    expect(cli.code).toBe(1);
    expect(cli.out).toMatch(/\n {3}2 {2}file_read .* failed {2}ERR_EVIDENCE_SNAPSHOT_TAMPERED/);
  });

  it("a deleted snapshot fails its step (ERR_EVIDENCE_SNAPSHOT_MISSING)", async () => {
    const f = await recordedFileRun();
    rmSync(snapshotOf(f, "meeting at noon\n"));
    const [r] = await replay(f);
    expect(r!.steps[0]).toMatchObject({ status: "failed", code: "ERR_EVIDENCE_SNAPSHOT_MISSING" });
    expect(r!.steps[3]).toMatchObject({ status: "failed", code: "ERR_EVIDENCE_SNAPSHOT_MISSING" });
  });

  it("a tampered bundle refuses the replay at step 1 (ERR_EVIDENCE_BUNDLE_TAMPERED, exit 1)", async () => {
    const f = await recordedFileRun();
    const dir = join(`${f.db}.evidence`, "bundles");
    const [name] = readdirSync(dir);
    const path = join(dir, name!);
    const bundle = JSON.parse(readFileSync(path, "utf8"));
    bundle.policies[0].data_b64 = Buffer.from(STRICTER).toString("base64");
    writeFileSync(path, JSON.stringify(bundle));
    await expect(replay(f)).rejects.toMatchObject({
      code: "ERR_EVIDENCE_BUNDLE_TAMPERED",
      message: expect.stringContaining("step 1"),
    });
    const cli = await runCli("replay", f.runId, "--journal", f.db);
    expect(cli.err).toContain("ERR_EVIDENCE_BUNDLE_TAMPERED");
    expect(cli.code).toBe(1);
  });

  it("an unknown run is refused (ERR_EVIDENCE_RUN_UNKNOWN)", async () => {
    const f = await recordedFileRun();
    await expect(
      replayRuns({ db: f.db, keys: [f.pub], run: "nope", host: cliReplayHost }),
    ).rejects.toMatchObject({
      code: "ERR_EVIDENCE_RUN_UNKNOWN",
    });
  });
});

describe("warden whatif", () => {
  it("shows the decisions a stricter policy changes, with counts, as a table and as JSON", async () => {
    const f = await recordedFileRun();
    writeFileSync(join(f.dir, "stricter.yaml"), STRICTER);
    const t = await runCli("whatif", f.runId, "--policy", join(f.dir, "stricter.yaml"), "--journal", f.db);
    expect(t.code).toBe(0);
    expect(t.out).toMatch(/\| {4}1 \| file_read \| allow → deny/);
    expect(t.out).toContain("1 run(s), 4 step(s): 2 changed, 2 unchanged");
    const j = await runCli(
      "whatif",
      f.runId,
      "--policy",
      join(f.dir, "stricter.yaml"),
      "--journal",
      f.db,
      "--json",
    );
    const report = JSON.parse(j.out);
    expect(report).toMatchObject({ runs: 1, steps: 4, changed: 2, unchanged: 2 });
    expect(
      report.rows.map((r: { step: number; old: string; new: string }) => [r.step, r.old, r.new]),
    ).toEqual([
      [1, "allow", "deny"],
      [4, "allow", "deny"],
    ]);
    expect(report.rows[0].reason).toContain("RULE:no-notes");
  });

  it("covers every run of a time range, and the same policy changes nothing", async () => {
    const f = await recordedFileRun();
    const range = ["--from", "2000-01-01T00:00:00Z", "--to", "2999-01-01T00:00:00Z"];
    const j = await runCli(
      "whatif",
      ...range,
      "--policy",
      join(f.dir, "policy.yaml"),
      "--journal",
      f.db,
      "--json",
    );
    expect(JSON.parse(j.out)).toMatchObject({ runs: 1, steps: 4, changed: 0 });
    const none = await runCli(
      "whatif",
      "--from",
      "2999-01-01T00:00:00Z",
      "--policy",
      join(f.dir, "policy.yaml"),
      "--journal",
      f.db,
    );
    expect(none.code).toBe(2);
    expect(none.err).toContain("ERR_EVIDENCE_RUN_UNKNOWN");
  });
});
