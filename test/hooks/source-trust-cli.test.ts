// Source trust through the CLI: `warden hooks serve --stdio --source-trust FILE`, with the
// pin store kept beside the journal, so a rug pull is caught by a later process.
import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ev } from "./events.js";
import { tempDir } from "./helpers.js";

const ROOT = resolve(import.meta.dirname, "../..");
const line = (v: unknown) => `${JSON.stringify(v)}\n`;
const connect = (server_id: string, server_command: string) =>
  ev("PreMCPConnect", { source: "user", server_id, transport: "stdio", server_command });

function serve(dir: string, args: string[], events: unknown[]): Record<string, unknown>[] {
  if (!existsSync(join(ROOT, "dist/src/cli/main.js")))
    throw new Error("run `npm run build` first (npm test does)");
  const r = spawnSync(
    process.execPath,
    [join(ROOT, "bin/warden.js"), "hooks", "serve", "--stdio", "--dir", dir, ...args],
    {
      input: [line({ aarts_version: "1" }), ...events.map(line)].join(""),
      encoding: "utf8",
      timeout: 30_000,
    },
  );
  expect(r.status, r.stderr).toBe(0);
  return r.stdout
    .trim()
    .split("\n")
    .slice(1)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("warden hooks serve --source-trust", () => {
  it("a look-alike of an allow-listed server is denied; a later process catches a changed launch command", () => {
    const dir = tempDir();
    const config = join(dir, "source-trust.json");
    writeFileSync(config, JSON.stringify({ trusted: [{ kind: "mcp-server", id: "github" }] }));
    const first = serve(
      dir,
      ["--source-trust", config],
      [connect("github", "npx gh-mcp@1"), connect("gіthub", "npx x")],
    );
    expect(first.map((v) => v.decision)).toEqual(["allow", "deny"]);
    expect(first[1]?.matched_rule_id).toBe("aarts-source-lookalike");
    const later = serve(dir, ["--source-trust", config], [connect("github", "npx gh-mcp@6")]);
    expect(later[0]).toMatchObject({ decision: "deny", matched_rule_id: "aarts-source-changed" });
  });

  it("a source-trust file that does not parse stops the command", () => {
    const dir = tempDir();
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ unknown: "allow" }));
    const r = spawnSync(
      process.execPath,
      [join(ROOT, "bin/warden.js"), "hooks", "serve", "--stdio", "--dir", dir, "--source-trust", bad],
      {
        input: "",
        encoding: "utf8",
      },
    );
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("ERR_CLI_INPUT");
  });
});
