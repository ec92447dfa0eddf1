// The root help lists every command from its summary without loading the commands; the
// command that runs (or `help X`) is registered in full, options included.
import { describe, expect, it } from "vitest";
import { SUMMARY } from "../../src/cli/commands/summaries.js";
import { runCli } from "../helpers/cli.js";

describe("warden command table", () => {
  it("the root help lists every command with its summary", async () => {
    const r = await runCli("--help");
    expect(r.code).toBe(0);
    for (const name of Object.keys(SUMMARY)) expect(r.out).toMatch(new RegExp(`^  ${name} `, "m"));
  });

  it("help for one command shows its options (the command is fully registered)", async () => {
    const r = await runCli("help", "gate");
    expect(r.out).toContain("--session <file>");
    const s = await runCli("sidecar", "--help");
    expect(s.out).toContain("--init-keys");
  });

  it("an unknown command is a usage error", async () => {
    const r = await runCli("no-such-command");
    expect(r.code).toBe(2);
    expect(r.err).toContain("unknown command");
  });
});
