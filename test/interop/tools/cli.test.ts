import { copyFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../../helpers/cli.js";
import { FIXTURES } from "../../tools/helpers.js";
import { EXAMPLES } from "./examples.js";

const nmap = join(EXAMPLES, "nmap_scan.clad.toml");
const nikto = join(EXAMPLES, "nikto_scan.clad.toml");
const types = join(FIXTURES, "toolclad.toml");

describe("warden contract validate", () => {
  it("accepts a valid manifest", async () => {
    const r = await runCli("contract", "validate", nmap);
    expect(r).toMatchObject({ code: 0, err: "" });
    expect(r.out).toBe("ok  nmap_scan 1.0.0 (exec, 3 argument(s))\n");
  });
  it("uses --types, or a toolclad.toml beside the manifest", async () => {
    expect((await runCli("contract", "validate", nikto, "--types", types)).code).toBe(0);
    const dir = mkdtempSync(join(tmpdir(), "warden-cli-"));
    copyFileSync(nikto, join(dir, "nikto_scan.clad.toml"));
    copyFileSync(types, join(dir, "toolclad.toml"));
    expect((await runCli("contract", "validate", join(dir, "nikto_scan.clad.toml"))).code).toBe(0);
  });
  it("exits 1 with the code and line for an invalid manifest", async () => {
    const r = await runCli("contract", "validate", nikto);
    expect(r.code).toBe(1);
    expect(r.err).toContain("ERR_TOOL_TYPE_UNKNOWN");
    expect(r.err).toContain("nikto_scan.clad.toml:22");
    const j = await runCli("contract", "validate", nikto, "--json");
    expect(JSON.parse(j.out)).toMatchObject({ ok: false, code: "ERR_TOOL_TYPE_UNKNOWN", line: 22 });
  });
});

describe("warden contract check", () => {
  it("prints validated arguments and the argv", async () => {
    const r = await runCli(
      "contract",
      "check",
      nmap,
      "--args",
      '{"target":"10.0.0.1","scan_type":"ping"}',
      "--any-scope",
    );
    expect(r.code).toBe(0);
    const out = JSON.parse(r.out);
    expect(out.args).toEqual({ target: "10.0.0.1", scan_type: "ping", extra_flags: "" });
    expect(out.invocation.argv).toEqual([
      "nmap",
      "-sn",
      "-PE",
      "--max-rate",
      "1000",
      "-oX",
      "<output_file>",
      "--no-stylesheet",
      "-v",
      "10.0.0.1",
    ]);
  });
  it("exits 1 with the coded rejection", async () => {
    const r = await runCli(
      "contract",
      "check",
      nmap,
      "--args",
      '{"target":"10.0.0.1; reboot","scan_type":"ping"}',
      "--any-scope",
    );
    expect(r.code).toBe(1);
    expect(r.err).toContain("ERR_TOOL_ARG_METACHAR");
    const j = await runCli(
      "contract",
      "check",
      nmap,
      "--args",
      '{"target":"10.0.0.1","scan_type":"x"}',
      "--any-scope",
      "--json",
    );
    expect(JSON.parse(j.out)).toMatchObject({
      ok: false,
      code: "ERR_TOOL_ARG_ENUM",
      arg: "scan_type",
      rule: "allowed",
    });
  });
  it("fails closed without a scope, and applies --scope", async () => {
    const args = '{"target":"10.0.0.1","scan_type":"ping"}';
    const none = await runCli("contract", "check", nmap, "--args", args);
    expect(none.code).toBe(1);
    expect(none.err).toContain("ERR_TOOL_ARG_OUT_OF_SCOPE");
    const dir = mkdtempSync(join(tmpdir(), "warden-cli-"));
    writeFileSync(join(dir, "scope.json"), '{"allowed_cidrs":["192.168.0.0/16"]}');
    const out = await runCli("contract", "check", nmap, "--args", args, "--scope", join(dir, "scope.json"));
    expect(out.code).toBe(1);
    writeFileSync(join(dir, "scope.json"), '{"allowed_cidrs":["10.0.0.0/8"]}');
    expect(
      (await runCli("contract", "check", nmap, "--args", args, "--scope", join(dir, "scope.json"))).code,
    ).toBe(0);
  });
  it("exits 2 for --args that are not JSON", async () => {
    const r = await runCli("contract", "check", nmap, "--args", "{target:1}");
    expect(r.code).toBe(2);
    expect(r.err).toContain("ERR_CLI_INPUT");
  });
});

describe("warden contract schema", () => {
  it("prints the model's view only", async () => {
    const r = await runCli("contract", "schema", nmap);
    expect(r.code).toBe(0);
    const tool = JSON.parse(r.out);
    expect(Object.keys(tool).sort()).toEqual(["description", "inputSchema", "name", "outputSchema"]);
    expect(tool.inputSchema.required).toEqual(["target", "scan_type"]);
    expect(r.out).not.toContain("--max-rate");
  });
  it("exits 1 for an invalid manifest", async () => {
    expect((await runCli("contract", "schema", nikto)).code).toBe(1);
  });
});
