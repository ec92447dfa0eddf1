// The ToolClad project's example manifests load, with the project types nikto needs.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadContract } from "../../../src/tools/index.js";
import { projectTypes } from "../../tools/helpers.js";
import { EXAMPLES } from "./examples.js";

describe("ToolClad examples", () => {
  const files = readdirSync(EXAMPLES).filter((f) => f.endsWith(".clad.toml"));

  it("has the five example manifests", () => {
    expect(files.sort()).toEqual([
      "curl_fetch.clad.toml",
      "dig_lookup.clad.toml",
      "nikto_scan.clad.toml",
      "nmap_scan.clad.toml",
      "whois_lookup.clad.toml",
    ]);
  });

  it.each(files)("loads %s", (file) => {
    const r = loadContract(join(EXAMPLES, file), { types: projectTypes() });
    expect(r.ok).toBe(true);
  });

  it("parses nmap into a typed contract", () => {
    const r = loadContract(join(EXAMPLES, "nmap_scan.clad.toml"));
    if (!r.ok) throw new Error(r.message);
    const c = r.tool.contract;
    expect(c.tool).toMatchObject({
      name: "nmap_scan",
      binary: "nmap",
      timeout_seconds: 600,
      risk_tier: "low",
    });
    expect(c.tool.cedar).toEqual({ resource: "Tool::NmapScan", action: "execute_tool" });
    expect(c.tool.evidence).toEqual({
      output_dir: "{evidence_dir}/{scan_id}-nmap",
      capture: true,
      hash: "sha256",
    });
    expect(c.args.scan_type?.allowed).toContain("vuln_script");
    expect(c.command?.mappings?.scan_type?.ping).toBe("-sn -PE");
    expect(c.output).toMatchObject({ format: "xml", parser: "builtin:xml", max_bytes: 1048576 });
    expect([...r.tool.args.keys()]).toEqual(["target", "scan_type", "extra_flags"]);
  });

  it("copies the project types a manifest uses into its contract", () => {
    const r = loadContract(join(EXAMPLES, "nikto_scan.clad.toml"), { types: projectTypes() });
    if (!r.ok) throw new Error(r.message);
    expect(Object.keys(r.tool.contract.types ?? {}).sort()).toEqual([
      "hostname",
      "port_range",
      "scan_rate",
      "service_protocol",
    ]);
  });

  it("rejects nikto without its project types, naming the type and line", () => {
    const r = loadContract(join(EXAMPLES, "nikto_scan.clad.toml"));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.code).toBe("ERR_TOOL_TYPE_UNKNOWN");
    expect(r.message).toContain("unknown type 'hostname'");
    expect(r.line).toBe(22);
    expect(r.message).toContain("nikto_scan.clad.toml:22");
  });
});
