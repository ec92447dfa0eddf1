// Tool contract hot paths: argument validation, invocation building and output
// validation for the project's net_scan manifest (bench/fixtures), beside a same-run baseline of JSON.parse of the
// same arguments (the least a caller pays to receive them at all).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  buildInvocation,
  parseContract,
  parseOutput,
  prepareInvocation,
  toModelTool,
  validateArgs,
} from "../src/tools/index.js";

import { measure, table } from "./_stats.js";

const manifest = readFileSync(
  join(import.meta.dirname, "..", "..", "bench", "fixtures", "net_scan.clad.toml"),
  "utf8",
);
const loaded = parseContract(manifest);
if (!loaded.ok) throw new Error(loaded.message);
const tool = loaded.tool;
const argsJson = '{"target":"10.0.1.0/24","scan_type":"service","extra_flags":"-Pn"}';
const args = JSON.parse(argsJson);
const opts = {
  scope: { allowed_cidrs: ["10.0.0.0/8"], allowed_hosts: ["*.example.com"] },
  runtime: { outputFile: "/evidence/1/scan.xml", scanId: "1", evidenceDir: "/evidence" },
};
const valid = validateArgs(tool, args, opts);
if (!valid.ok) throw new Error(valid.message);
const output = JSON.stringify({
  hosts: Array.from({ length: 20 }, (_, i) => ({
    ip: `10.0.1.${i}`,
    ports: [{ port: 80, protocol: "tcp", service: "http", version: "nginx" }],
  })),
});
const jsonTool = parseContract(
  manifest
    .replace('format = "xml"', 'format = "json"')
    .replace('parser = "builtin:xml"', 'parser = "builtin:json"'),
);
if (!jsonTool.ok) throw new Error(jsonTool.message);

const N = 20_000;
const baseline = measure("JSON.parse args (baseline)", N, () => JSON.parse(argsJson));
const rows = [
  baseline,
  measure("validateArgs (3 args, scope)", N, () => validateArgs(tool, args, opts)),
  measure("buildInvocation (exec)", N, () => buildInvocation(tool, valid.args, opts)),
  measure("prepareInvocation", N, () => prepareInvocation(tool, args, opts)),
  measure("parseOutput json 20 hosts + schema", 5000, () => parseOutput(jsonTool.tool, output)),
  measure("toModelTool", 5000, () => toModelTool(tool)),
  measure("parseContract (net_scan manifest)", 500, () => parseContract(manifest)),
];
process.stdout.write(table(rows, baseline));
