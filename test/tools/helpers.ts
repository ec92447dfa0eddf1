// Helpers for the tools tests: inline manifests and the project's own fixtures.
// (The ToolClad project's example manifests are read by test/interop/tools/examples.ts.)
import { join } from "node:path";
import type { CompiledTool, ContractFailure } from "../../src/tools/index.js";
import { loadProjectTypes, parseContract } from "../../src/tools/index.js";

export const FIXTURES = join(import.meta.dirname, "fixtures");
export const projectTypes = () => loadProjectTypes(join(FIXTURES, "toolclad.toml"));

/** A minimal exec manifest; `extra` is appended (more args, sections). */
export function manifest(extra = "", head = ""): string {
  return `${head}
[tool]
name = "t"
version = "1.0.0"
binary = "echo"
description = "test tool"

[args.value]
position = 1
required = true
type = "string"

[command]
exec = ["echo", "{value}"]

[output]
format = "text"

[output.schema]
type = "object"
${extra}`;
}

export function compile(text: string): CompiledTool {
  const r = parseContract(text, { source: "t.clad.toml" });
  if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
  return r.tool;
}

export function failure(text: string): ContractFailure {
  const r = parseContract(text, { source: "t.clad.toml" });
  if (r.ok) throw new Error("expected the manifest to be rejected");
  return r;
}
