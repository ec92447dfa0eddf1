// Shadow mode in front of a coding agent: `warden hooks claude-code --shadow-policy FILE`,
// spawned per payload as Claude Code runs it. The shadow bundle (the host-tools preset with
// one stricter rule) decides nothing — the Edit it would deny is left to Claude Code — and
// `warden shadow report` over the hooks journal names the rule, the tool and the example.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "./helpers.js";

const ROOT = resolve(import.meta.dirname, "../..");

function hook(dir: string, shadow: string, fixture: string) {
  if (!existsSync(join(ROOT, "dist/src/cli/main.js")))
    throw new Error("run `npm run build` first (npm test does)");
  const { CLAUDE_PROJECT_DIR: _omit, ...env } = process.env;
  return spawnSync(
    process.execPath,
    [join(ROOT, "bin/warden.js"), "hooks", "claude-code", "--shadow-policy", shadow],
    {
      input: readFileSync(join(ROOT, "test/fixtures/claude-code", `${fixture}.json`)),
      env: { ...env, WARDEN_HOOKS_DIR: dir },
      encoding: "utf8",
      timeout: 30_000,
    },
  );
}

describe("shadow policies in the hooks", () => {
  it("the Edit a stricter shadow would deny is left to the host; the report names the shadow's rule", async () => {
    const dir = tempDir();
    const preset = readFileSync(join(ROOT, "policies/host-tools.yaml"), "utf8");
    const shadow = join(dir, "stricter.yaml");
    writeFileSync(
      shadow,
      preset.replace(
        /^rules:\n/m,
        `rules:
  - id: shadow-no-edits
    name: Edits need review (candidate)
    priority: 1
    match: { toolClass: file, action: edit }
    decision: deny
    reason: candidate rule
`,
      ),
    );
    const r = hook(dir, shadow, "pre-tool-use-edit-inside-workspace");
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    // Enforcing: allowed, so the adapter prints nothing and Claude Code proceeds.
    expect(r.stdout.trim()).toBe("");
    const report = await runCli("shadow", "report", "--journal", join(dir, "journal.db"), "--json");
    expect(report.code).toBe(0);
    const parsed = JSON.parse(report.out) as { diffs: number; groups: Record<string, unknown>[] };
    expect(parsed.diffs).toBe(1);
    expect(parsed.groups[0]).toMatchObject({ change: "allow→deny", shadow_rules: ["shadow-no-edits"] });
  });
});
