// `warden trust simulate`: the real engine over a JSONL file, the exact output
// shape, coded line errors with exit 2; the built binary end to end (spawned from dist).
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { REPO_ROOT } from "../helpers/repo.js";

const dir = mkdtempSync(join(tmpdir(), "warden-sim-"));
let n = 0;
function file(lines: (string | object)[], name = `events-${n++}.jsonl`): string {
  const p = join(dir, name);
  writeFileSync(p, lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n"));
  return p;
}

const ev = (time: string, event: string, subject = "agent-b", truster?: string) =>
  truster === undefined ? { time, subject, event } : { time, subject, event, truster };

const violations = [
  ev("2026-03-01T12:00:00Z", "policy_violation"),
  ev("2026-03-01T12:10:00Z", "policy_violation"),
  ev("2026-03-01T12:20:00Z", "policy_violation"),
];

describe("warden trust simulate", () => {
  it("prints the table and the emitted ECTs in the documented shape", async () => {
    const r = await runCli("trust", "simulate", "--events", file(violations), "--json");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const out = JSON.parse(r.out);
    expect(Object.keys(out)).toEqual(["table", "emitted"]);
    expect(out.table).toEqual({
      deployment: {
        "agent-b": {
          score: 0.131072,
          interactions: 3,
          confidence: "low",
          status: "quarantined",
          quarantine_until: "2026-03-01T13:20:00.000Z",
          quarantine_count: 1,
        },
      },
    });
    expect(out.emitted.map((e: { exec_act: string; time: string }) => [e.time, e.exec_act])).toEqual([
      ["2026-03-01T12:20:00.000Z", "apae:trust_revoke"],
      ["2026-03-01T12:20:00.000Z", "apae:quarantine"],
    ]);
    expect(Object.keys(out.emitted[1])).toEqual(["time", "exec_act", "subject", "ext"]);
    expect(out.emitted[1].ext).toMatchObject({
      "apae.subject": "agent-b",
      "apae.score": 0.131072,
      "apae.threshold": 0.15,
      "apae.quarantine_until": "2026-03-01T13:20:00.000Z",
    });
  });

  it("--until advances the clock: quarantine expiry resets to 0.5 and emits the recovery ECT", async () => {
    const r = await runCli(
      "trust",
      "simulate",
      "--events",
      file(violations),
      "--until",
      "2026-03-02T00:00:00Z",
      "--json",
    );
    const out = JSON.parse(r.out);
    expect(out.table.deployment["agent-b"]).toMatchObject({
      score: 0.5,
      status: "active",
      quarantine_until: null,
      quarantine_count: 1,
    });
    expect(out.emitted[2]).toEqual({
      time: "2026-03-01T13:20:00.000Z",
      exec_act: "apae:quarantine",
      subject: "agent-b",
      ext: {
        "apae.subject": "agent-b",
        "apae.to_state": "active",
        "apae.score": 0.5,
        "apae.quarantine_count": 1,
        "apae.reason": "quarantine expired",
      },
    });
  });

  it("keeps a table per truster and applies --config overrides", async () => {
    const cfg = join(dir, "trust.yaml");
    writeFileSync(cfg, "trust:\n  beta: 0.5\n  initial_score: 0.6\n");
    const events = file([
      ev("2026-03-01T12:00:00Z", "task_failure", "b", "agent-a"),
      ev("2026-03-01T12:00:01Z", "task_success", "b"),
    ]);
    const out = JSON.parse(
      (await runCli("trust", "simulate", "--events", events, "--config", cfg, "--json")).out,
    );
    expect(out.table["agent-a"].b.score).toBe(0.3);
    expect(out.table.deployment.b.score).toBe(0.61);
  });

  it("a recovery between two events is emitted in time order", async () => {
    const events = file([
      ...violations,
      ev("2026-03-01T12:30:00Z", "task_failure", "agent-c"),
      ev("2026-03-01T14:00:00Z", "task_success"),
    ]);
    const out = JSON.parse((await runCli("trust", "simulate", "--events", events, "--json")).out);
    const times = out.emitted.map((e: { time: string }) => e.time);
    expect(times).toEqual([...times].sort());
    expect(out.table.deployment["agent-b"]).toMatchObject({ score: 0.51, status: "active" });
  });

  const bad: [string, (string | object)[], number, RegExp][] = [
    ["not JSON", [violations[0] as object, "{nope"], 2, /ERR_JSON_SYNTAX/],
    ["an unknown event", [{ ...violations[0], event: "bribe" }], 1, /event/],
    ["an unknown key", [{ ...violations[0], score: 1 }], 1, /score|key/i],
    ["a time without a zone", [{ ...violations[0], time: "2026-03-01T12:00:00" }], 1, /RFC 3339/],
    ["a day the month does not have", [{ ...violations[0], time: "2026-02-30T12:00:00Z" }], 1, /RFC 3339/],
    ["time going backwards", [violations[1] as object, violations[0] as object], 2, /earlier than line 1/],
    [
      "a duplicate key",
      ['{"time":"2026-03-01T12:00:00Z","subject":"a","subject":"b","event":"task_success"}'],
      1,
      /DUPLICATE/,
    ],
  ];
  for (const [what, lines, line, msg] of bad) {
    it(`refuses ${what} with ERR_TRUST_EVENT_INVALID naming line ${line}, exit 2`, async () => {
      const r = await runCli("trust", "simulate", "--events", file(lines), "--json");
      expect(r.code).toBe(2);
      expect(r.out).toBe("");
      expect(r.err).toContain(`ERR_TRUST_EVENT_INVALID: line ${line}:`);
      expect(r.err).toMatch(msg);
    });
  }

  it("refuses a bad --until, a bad --config and a missing file with codes", async () => {
    const f = file(violations);
    const early = await runCli("trust", "simulate", "--events", f, "--until", "2026-03-01T00:00:00Z");
    expect([early.code, early.err]).toEqual([2, expect.stringContaining("ERR_TRUST_EVENT_INVALID")]);
    const garbage = await runCli("trust", "simulate", "--events", f, "--until", "tomorrow");
    expect(garbage.err).toContain("ERR_CLI_USAGE");
    const cfg = join(dir, "bad.json");
    writeFileSync(cfg, '{"alhpa": 0.1}');
    const c = await runCli("trust", "simulate", "--events", f, "--config", cfg);
    expect([c.code, c.err]).toEqual([2, expect.stringContaining("ERR_TRUST_CONFIG_INVALID")]);
    const m = await runCli("trust", "simulate", "--events", join(dir, "missing.jsonl"));
    expect([m.code, m.err]).toEqual([2, expect.stringContaining("ERR_CLI_INPUT")]);
  });

  it("an agent named __proto__ is a table key like any other", async () => {
    const out = JSON.parse(
      (
        await runCli(
          "trust",
          "simulate",
          "--events",
          file([ev("2026-03-01T12:00:00Z", "task_success", "__proto__")]),
          "--json",
        )
      ).out,
    );
    expect(Object.getOwnPropertyDescriptor(out.table.deployment, "__proto__")?.value).toMatchObject({
      score: 0.51,
    });
  });
});

describe("bin/warden.js trust simulate (built)", () => {
  // `npm test` builds dist first (pretest).
  it("runs the built binary end to end", () => {
    const bin = join(REPO_ROOT, "bin", "warden.js");
    const ok = spawnSync(
      process.execPath,
      [bin, "trust", "simulate", "--events", file(violations), "--json"],
      { encoding: "utf8" },
    );
    expect(ok.stderr).toBe("");
    expect(ok.status).toBe(0);
    expect(JSON.parse(ok.stdout).table.deployment["agent-b"].status).toBe("quarantined");
    const bad = spawnSync(
      process.execPath,
      [bin, "trust", "simulate", "--events", file([violations[0] as object, "[]"])],
      { encoding: "utf8" },
    );
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("ERR_TRUST_EVENT_INVALID: line 2:");
  });
});
