// contractToCanonical over the ToolClad project's example manifests.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../../src/contracts/index.js";
import { contractToCanonical, loadContract, type ToolContract } from "../../../src/tools/index.js";
import { projectTypes } from "../../tools/helpers.js";
import { EXAMPLES } from "./examples.js";

function nmap(): ToolContract {
  const r = loadContract(join(EXAMPLES, "nmap_scan.clad.toml"));
  if (!r.ok) throw new Error(r.message);
  return r.tool.contract;
}

describe("contractToCanonical", () => {
  it("is the whole contract as plain JSON data", () => {
    const c = contractToCanonical(nmap());
    expect(Object.keys(c).sort()).toEqual(["args", "command", "output", "tool"]);
    const json = canonicalJson(c);
    for (const needle of [
      "--version-intensity 5",
      "scope_target",
      "{_scan_flags}",
      "Tool::NmapScan",
      "hosts",
      "max_rate",
    ]) {
      expect(json).toContain(needle);
    }
    expect(JSON.parse(JSON.stringify(c))).toEqual(c);
  });

  it("carries the project types the contract uses", () => {
    const r = loadContract(join(EXAMPLES, "nikto_scan.clad.toml"), { types: projectTypes() });
    if (!r.ok) throw new Error(r.message);
    const types = contractToCanonical(r.tool.contract).types as Record<string, { max?: number }>;
    expect(types.scan_rate?.max).toBe(10000);
  });
});
