// The attack suite against the ToolClad project's nmap example: what a prompt-injected
// model would try through its template, and what the model may see of it.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  buildInvocation,
  loadContract,
  prepareInvocation,
  toModelTool,
  validateArgs,
} from "../../../src/tools/index.js";
import { projectTypes } from "../../tools/helpers.js";
import { EXAMPLES } from "./examples.js";

describe("argument and option injection through the template", () => {
  const nmap = loadContract(join(EXAMPLES, "nmap_scan.clad.toml"));
  if (!nmap.ok) throw new Error(nmap.message);
  const runtime = { outputFile: "/ev/1/scan.xml", scanId: "1", evidenceDir: "/ev" };
  it("a value with spaces stays one argv element", () => {
    const r = prepareInvocation(
      nmap.tool,
      { target: "10.0.0.1", scan_type: "ping", extra_flags: "x -iL /etc/passwd -oN /tmp/x" },
      { scope: { allowed_cidrs: ["10.0.0.0/8"] }, runtime },
    );
    if (!r.ok || r.invocation.kind !== "exec") throw new Error("expected an exec invocation");
    expect(r.invocation.argv).toContain("x -iL /etc/passwd -oN /tmp/x");
    expect(r.invocation.argv).not.toContain("-iL");
  });
  it("a free-text value starting with '-' cannot reach nmap as an option (issue 17 #5)", () => {
    const r = prepareInvocation(
      nmap.tool,
      { target: "10.0.0.1", scan_type: "ping", extra_flags: "-iL /etc/passwd -oN /tmp/x" },
      { scope: { allowed_cidrs: ["10.0.0.0/8"] }, runtime },
    );
    expect(r).toMatchObject({ ok: false, code: "ERR_TOOL_ARG_FORMAT" });
  });
  it("an enum value cannot select flags outside its mapping", () => {
    const r = validateArgs(
      nmap.tool,
      { target: "10.0.0.1", scan_type: "-sS -O" },
      { unrestrictedScope: true },
    );
    expect(r).toMatchObject({ ok: false, code: "ERR_TOOL_ARG_ENUM", arg: "scan_type" });
  });
  it("a target cannot be an option", () => {
    const r = validateArgs(
      nmap.tool,
      { target: "--script=evil", scan_type: "ping" },
      { unrestrictedScope: true },
    );
    expect(r).toMatchObject({ ok: false, arg: "target" });
  });
  it("unvalidated arguments cannot be passed to buildInvocation", () => {
    expect(() => buildInvocation(nmap.tool, { target: "x; id", scan_type: "ping" })).toThrow(/validateArgs/);
  });
});

describe("template leakage to the model", () => {
  const exec = loadContract(join(EXAMPLES, "nmap_scan.clad.toml"), { types: projectTypes() });
  if (!exec.ok) throw new Error(exec.message);

  it("the exec tool's model view carries no binary, template, mapping or default", () => {
    const json = JSON.stringify(toModelTool(exec.tool));
    for (const mark of [
      '"nmap"',
      "binary",
      "{_scan_flags}",
      "--max-rate",
      "-sn -PE",
      "--version-intensity",
      "1000",
      "_output_file",
      "Tool::NmapScan",
      "evidence",
    ]) {
      expect(json).not.toContain(mark);
    }
  });
});
