// Runs the built demo (`node dist/examples/demo.js`) as `npm run demo` does and checks
// its machine-readable summary: the injection is denied, the run quarantined, the
// collector untouched, the journal verified, and the temp directory removed. The
// `warden journal verify` command is printed only when the journal is kept
// (WARDEN_DEMO_KEEP=1), and then it works as printed.
import { spawnSync } from "node:child_process";
import { existsSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/repo.js";

const DEMO_JS = join(REPO_ROOT, "dist", "examples", "demo.js");
const SOURCES = [
  "examples/demo.ts",
  "examples/demo-trust.ts",
  "src/runtime/apae.ts",
  "src/runtime/ect-stream.ts",
  "src/cli/runtime.ts",
  "src/cli/agent-run.ts",
  "src/cli/builtin-tools.ts",
];

let out = "";
let status: number | null = null;

beforeAll(() => {
  // `npm test` builds first; a direct `vitest run` may find no or a stale build.
  const built = existsSync(DEMO_JS) ? statSync(DEMO_JS).mtimeMs : 0;
  if (SOURCES.some((s) => statSync(join(REPO_ROOT, s)).mtimeMs > built)) {
    spawnSync("npx", ["tsc", "-p", "tsconfig.build.json"], { cwd: REPO_ROOT, stdio: "ignore" });
  }
  const r = spawnSync(process.execPath, [DEMO_JS], { cwd: REPO_ROOT, encoding: "utf8", timeout: 60_000 });
  out = r.stdout;
  status = r.status;
}, 180_000);

function summary() {
  const line = out.split("\n").find((l) => l.startsWith("DEMO_SUMMARY "));
  expect(line).toBeDefined();
  return JSON.parse((line as string).slice("DEMO_SUMMARY ".length));
}

describe("npm run demo", () => {
  it("exits 0", () => {
    expect(status).toBe(0);
  });

  it("runs the benign task (note, word count, two wiki pages) and nothing else", () => {
    expect(summary().executed).toEqual(["file_read", "word_count", "fetch_page", "fetch_page"]);
  });

  it("denies the injected secret read by the web-taint behaviour rule and quarantines the run", () => {
    const s = summary();
    expect(s.reason).toBe("quarantined");
    expect(s.quarantined).toBe(true);
    expect(s.denied[0]).toEqual({
      tool: "file_read",
      reasons: expect.arrayContaining(["behavior_web_taint_sensitive_probe"]),
    });
  });

  it("keeps denying egress and writes for the quarantined run, even asked directly", () => {
    const s = summary();
    expect(s.denied.slice(1).map((d: { tool: string }) => d.tool)).toEqual(["send_report", "file_write"]);
    for (const d of s.denied.slice(1)) expect(d.reasons).toContain("quarantined");
    expect(s.decisions).toEqual({ allow: 4, deny: 3, modify: 0, step_up: 0, defer: 0 });
  });

  it("leaves the collector untouched and the secret unprinted", () => {
    expect(summary().collectorRequests).toBe(0);
    expect(out).toContain("collector received 0 request(s)");
    expect(out).not.toMatch(/sk-demo-[0-9a-f]{32}/);
  });

  it("verifies the journal and removes its temp directory", () => {
    const s = summary();
    expect(s.journal).toMatchObject({ verified: true, failure: null });
    expect(s.journal.entries).toBeGreaterThan(20);
    expect(s.journal.head).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(existsSync(s.journal.db)).toBe(false);
  });

  it("prints no verify command for the journal it deletes, only how to keep it", () => {
    expect(out).not.toContain("journal verify");
    expect(out).toContain("WARDEN_DEMO_KEEP=1 npm run demo");
  });
});

describe("npm run demo: the trust act (APAE)", () => {
  const trust = () => {
    const line = out.split("\n").find((l) => l.startsWith("TRUST_SUMMARY "));
    expect(line).toBeDefined();
    return JSON.parse((line as string).slice("TRUST_SUMMARY ".length));
  };

  it("prints the score falling by β² per credential probe, each probe in a fresh run", () => {
    expect(out).toContain(
      "scout probe 1: deny (RULE:deny-credentials); score 0.5 -> 0.32 (policy_violation)",
    );
    expect(out).toContain(
      "scout probe 2: deny (RULE:deny-credentials); score 0.32 -> 0.2048 (policy_violation)",
    );
    expect(out).toContain(
      "scout probe 3: deny (RULE:deny-credentials); score 0.2048 -> 0.131072 (policy_violation)",
    );
    expect(out).toContain("scout below the revocation floor 0.2: tokens and delegations revoked");
    expect(trust()).toMatchObject({ scores: [0.5, 0.32, 0.2048, 0.131072], revoked: true, stepsWithEct: 3 });
  });

  it("quarantines the agent below the floor and holds it in a new run", () => {
    const s = trust();
    expect(s.quarantined).toBe(true);
    expect(out).toContain(
      `scout QUARANTINED until ${s.quarantineUntil} (score 0.131072 below the quarantine floor 0.15)`,
    );
    expect(out).toContain("scout new run, a harmless write: deny (quarantined)");
    expect(s.heldReasons).toEqual(["quarantined"]);
  });
});

describe("WARDEN_DEMO_KEEP=1 npm run demo", () => {
  it("keeps the journal and prints a verify command that passes as printed", () => {
    const r = spawnSync(process.execPath, [DEMO_JS], {
      cwd: REPO_ROOT,
      encoding: "utf8",
      timeout: 60_000,
      env: { ...process.env, WARDEN_DEMO_KEEP: "1" },
    });
    const line = r.stdout.split("\n").find((l) => l.startsWith("verify it yourself: "));
    expect(r.status).toBe(0);
    expect(line).toBeDefined();
    const cmd = (line as string).slice("verify it yourself: ".length).split(" ");
    expect(cmd.slice(0, 4)).toEqual(["node", "bin/warden.js", "journal", "verify"]);
    const db = cmd[cmd.indexOf("--db") + 1] as string;
    try {
      expect(existsSync(db)).toBe(true);
      const v = spawnSync(process.execPath, cmd.slice(1), {
        cwd: REPO_ROOT,
        encoding: "utf8",
        timeout: 60_000,
      });
      expect(v.stderr).toBe("");
      expect(v.status).toBe(0);
      expect(v.stdout).toMatch(/intact/);
    } finally {
      rmSync(dirname(db), { recursive: true, force: true });
    }
  }, 120_000);
});
