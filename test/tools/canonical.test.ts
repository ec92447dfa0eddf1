// contractToCanonical on the project's own fixture manifest: defaults applied, every
// part covered by the hash. (The ToolClad examples: test/interop/tools/canonical-examples.test.ts.)
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hasErrorCode, sha256Of } from "../../src/contracts/index.js";
import { contractToCanonical, loadContract, type ToolContract } from "../../src/tools/index.js";
import { compile, FIXTURES, manifest } from "./helpers.js";

function portProbe(): ToolContract {
  const r = loadContract(join(FIXTURES, "port_probe.clad.toml"));
  if (!r.ok) throw new Error(r.message);
  return r.tool.contract;
}

describe("contractToCanonical", () => {
  it("applies defaults, so spelling a default out does not change the signed bytes", () => {
    const implicit = compile(manifest()).contract;
    const explicit = compile(
      manifest().replace(
        'description = "test tool"',
        'description = "test tool"\ntimeout_seconds = 60\nrisk_tier = "low"\nhuman_approval = false',
      ),
    ).contract;
    expect(sha256Of(contractToCanonical(explicit))).toBe(sha256Of(contractToCanonical(implicit)));
  });

  // Any change to any part must change the canonical hash (part B signs these bytes).
  const mutations: [string, (c: ToolContract) => void][] = [
    ["tool description", (c) => (c.tool.description += "!")],
    ["timeout", (c) => (c.tool.timeout_seconds = 601)],
    ["cedar action", (c) => (c.tool.cedar = { resource: "Tool::NmapScan", action: "other" })],
    [
      "an argument's type",
      (c) => (c.args.target = { ...(c.args.target as ToolContract["args"][string]), type: "string" }),
    ],
    ["an allowed value", (c) => c.args.scan_type?.allowed?.push("udp")],
    [
      "a mapping value",
      (c) => ((c.command?.mappings?.scan_type as Record<string, string>).ping = "-sn -PE -n"),
    ],
    ["the template", (c) => (c.command = { ...c.command, template: `${c.command?.template} -Pn` })],
    ["a command default", (c) => (c.command = { ...c.command, defaults: { max_rate: 1001 } })],
    ["the output schema", (c) => (c.output.schema.required = ["hosts"])],
    ["the output cap", (c) => (c.output.max_bytes = 10)],
    ["a custom type", (c) => (c.types = { slug: { base: "string", pattern: "^[a-z]+$" } })],
    [
      "the scope",
      (c) =>
        (c.scope = { allowed_cidrs: ["10.0.0.0/8"], allowed_hosts: [], denied_cidrs: [], denied_hosts: [] }),
    ],
  ];
  it.each(mutations)("changes when %s changes", (_name, mutate) => {
    const before = sha256Of(contractToCanonical(portProbe()));
    const c = structuredClone(portProbe());
    mutate(c);
    expect(sha256Of(contractToCanonical(c))).not.toBe(before);
  });

  it("throws ERR_TOOL_MANIFEST_INVALID for something that is not a contract", () => {
    const bad = { ...portProbe(), extra: 1 } as unknown as ToolContract;
    let caught: unknown;
    try {
      contractToCanonical(bad);
    } catch (err) {
      caught = err;
    }
    expect(hasErrorCode(caught, "ERR_TOOL_MANIFEST_INVALID")).toBe(true);
  });
});
