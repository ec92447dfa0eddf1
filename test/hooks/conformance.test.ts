// `warden hooks conformance` through the built CLI: Warden passes Level 3 in process and
// over stdio; an engine that allows everything fails (exit 1) on exactly the hostile rows;
// the same harness drives the sidecar's HTTP engine.
import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  type ConformanceReport,
  HOOK_POINTS,
  hostToolsPolicyPath,
  httpTransport,
  runConformance,
  TOOL_CASES,
} from "../../src/hooks/index.js";
import { hashToken } from "../../src/server/index.js";
import { type Sidecar, startTestSidecar } from "../server/harness.js";
import { tempDir, WORKSPACE } from "./helpers.js";

const ROOT = resolve(import.meta.dirname, "../..");

function conformance(...args: string[]): {
  code: number | null;
  report: ConformanceReport | null;
  out: string;
} {
  if (!existsSync(join(ROOT, "dist/src/cli/main.js")))
    throw new Error("run `npm run build` first (npm test does)");
  const r = spawnSync(process.execPath, [join(ROOT, "bin/warden.js"), "hooks", "conformance", ...args], {
    encoding: "utf8",
    timeout: 120_000,
  });
  let report: ConformanceReport | null = null;
  try {
    report = JSON.parse(r.stdout) as ConformanceReport;
  } catch {
    report = null;
  }
  return { code: r.status, report, out: r.stdout + r.stderr };
}

describe("warden hooks conformance (built CLI)", () => {
  it("Warden's engine passes Level 3: every hook point and tool category exercised", () => {
    const { code, report } = conformance("--level", "3", "--json");
    expect(code).toBe(0);
    expect(report?.passed).toBe(true);
    expect(report?.coverage).toMatchObject({ hooksRequired: 20, toolsRequired: 13 });
    expect(report?.coverage.hooks).toHaveLength(20);
    expect(report?.coverage.tools).toHaveLength(13);
    const checks = (report?.rows ?? []).map((r) => r.check).join("\n");
    for (const p of HOOK_POINTS) expect(checks).toContain(`${p}:`);
    for (const t of Object.keys(TOOL_CASES)) expect(checks).toContain(`${t}:`);
    const groups = new Set(report?.rows.map((r) => r.group));
    for (const g of [
      "handshake",
      "hooks",
      "tools",
      "verdicts",
      "directives",
      "ask resolution",
      "failure policy",
      "host",
    ])
      expect(groups).toContain(g);
  });

  it("Warden's engine over stdio passes Level 3 with the plain table", () => {
    const dir = tempDir();
    const engine = `${process.execPath} ${join(ROOT, "bin/warden.js")} hooks serve --stdio --dir ${dir}`;
    // The driver is the host: it presents the hooks dir's host secret in the handshake.
    const secret = join(dir, "host.secret");
    const { code, out } = conformance("--level", "3", "--engine", engine, "--host-secret-file", secret);
    expect(code).toBe(0);
    expect(out).toMatch(/checks, 0 failed: PASS \(level 3\)/);
  });

  it("an engine that allows everything fails, on the hostile rows, with exit 1", () => {
    const script = join(tempDir(), "yes-engine.cjs");
    writeFileSync(
      script,
      `let b = "";
process.stdin.on("data", (c) => {
  b += c;
  let i;
  while ((i = b.indexOf("\\n")) >= 0) {
    const m = JSON.parse(b.slice(0, i)); b = b.slice(i + 1);
    process.stdout.write(JSON.stringify(m.hook_point ? { decision: "allow", category: "none", severity: "info", source: "yes" } : { compatible: true, engine_id: "yes" }) + "\\n");
  }
});`,
    );
    const { code, report } = conformance(
      "--level",
      "1",
      "--json",
      "--engine",
      `${process.execPath} ${script}`,
    );
    expect(code).toBe(1);
    const failed = (report?.rows ?? []).filter((r) => !r.pass && r.required).map((r) => r.check);
    expect(failed).toContain("PreToolUse: rm -rf / → block");
    expect(failed).toContain("shell: hostile call blocked");
    expect(failed).toContain("deny verdicts issued");
    expect(failed.some((c) => c.includes("benign"))).toBe(false);
    expect(report?.coverage.hooks).not.toContain("PreToolUse");
  });

  it("refuses a level that does not exist", () => {
    const { code, out } = conformance("--level", "4");
    expect(code).not.toBe(0);
    expect(out).toContain("--level must be 1, 2 or 3");
  });
});

describe("the harness against the sidecar's HTTP engine", () => {
  let s: Sidecar | undefined;
  afterAll(async () => s?.stop());

  it("passes Level 3 over HTTP", async () => {
    const token = "token-conformance-host-0123456789";
    s = await startTestSidecar({
      requireContract: false,
      config: {
        policies: [hostToolsPolicyPath()],
        gate: {
          tenant: "test",
          environment: "test",
          requireContract: false,
          principals: [{ id: "host-c", roles: ["host"] }],
          // The conformance cases are unrelated sessions under one host principal, hostile
          // ones included: each must start clean, so taint is not carried at the principal.
          context: { taint: { carry: "explicit" } },
        },
        auth: { principals: [{ id: "host-c", tokenSha256: hashToken(token) }] },
      },
    });
    const report = await runConformance({
      level: 3,
      engine: s.url,
      transport: httpTransport(s.url, token),
      workspace: WORKSPACE,
      host: false,
    });
    expect(report.rows.filter((r) => !r.pass)).toEqual([]);
    expect(report.passed).toBe(true);
  }, 60_000);
});
