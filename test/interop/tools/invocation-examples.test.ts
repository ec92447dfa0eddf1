// The ToolClad project's example manifests build the argv their authors intended.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type CompiledTool, loadContract, prepareInvocation } from "../../../src/tools/index.js";
import { projectTypes } from "../../tools/helpers.js";
import { argv, ok, scope } from "../../tools/invocation-helpers.js";
import { EXAMPLES } from "./examples.js";

const example = (name: string): CompiledTool => {
  const r = loadContract(join(EXAMPLES, `${name}.clad.toml`), { types: projectTypes() });
  if (!r.ok) throw new Error(r.message);
  return r.tool;
};

describe("exec invocations of the ToolClad examples", () => {
  it("nmap: mapping expands to flags, defaults and runtime values fill in, empty optional disappears", () => {
    expect(argv(example("nmap_scan"), { target: "10.0.1.0/24", scan_type: "syn" })).toEqual([
      "nmap",
      "-sS",
      "--top-ports",
      "1000",
      "--max-rate",
      "1000",
      "-oX",
      "/evidence/42-nmap/scan.xml",
      "--no-stylesheet",
      "-v",
      "10.0.1.0/24",
    ]);
  });
  it("nmap: without executor runtime values the build fails with a code", () => {
    const r = prepareInvocation(example("nmap_scan"), { target: "10.0.0.1", scan_type: "ping" }, { scope });
    expect(r).toMatchObject({ ok: false, code: "ERR_TOOL_RUNTIME_VAR_MISSING", rule: "runtime" });
  });
  it("curl: quoted template pieces keep their text; the header conditional follows `when`", () => {
    const curl = example("curl_fetch");
    expect(argv(curl, { url: "https://api.example.com/v1" })).toEqual([
      "curl",
      "-s",
      "-S",
      "-X",
      "GET",
      "--max-time",
      "25",
      "-w",
      "\\n%{http_code}",
      "https://api.example.com/v1",
    ]);
    expect(
      argv(curl, { url: "https://api.example.com/v1", method: "HEAD", headers: "Accept: text/plain" }),
    ).toEqual([
      "curl",
      "-s",
      "-S",
      "-X",
      "HEAD",
      "--max-time",
      "25",
      "-w",
      "\\n%{http_code}",
      "-H",
      "Accept: text/plain",
      "https://api.example.com/v1",
    ]);
  });
  it("nikto: several values in one token stay one element; the rate conditional compares as strings", () => {
    const nikto = example("nikto_scan");
    expect(argv(nikto, { target: "web.example.com" })).toEqual([
      "nikto",
      "-h",
      "http://web.example.com:80",
      "-maxtime",
      "600s",
      "-Format",
      "json",
    ]);
    expect(argv(nikto, { target: "web.example.com", port: "8443", protocol: "https", max_rate: 5 })).toEqual([
      "nikto",
      "-h",
      "https://web.example.com:8443",
      "-maxtime",
      "600s",
      "-Format",
      "json",
      "-Plugins",
      "@@ALL",
      "-maxrate",
      "5",
    ]);
  });
  it("dig and whois", () => {
    expect(argv(example("dig_lookup"), { target: "example.com", record_type: "MX" })).toEqual([
      "dig",
      "+short",
      "example.com",
      "MX",
    ]);
    expect(argv(example("whois_lookup"), { target: "10.1.2.3" })).toEqual(["whois", "10.1.2.3"]);
  });
  it("carries the contract timeout", () => {
    const inv = ok(prepareInvocation(example("whois_lookup"), { target: "example.com" }, { scope }));
    expect(inv.timeoutMs).toBe(30_000);
  });
});
