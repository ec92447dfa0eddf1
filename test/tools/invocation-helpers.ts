// Building invocations in tests: a fixed scope and runtime, and unwrapping helpers.
import {
  type BuildFailure,
  type CompiledTool,
  type Invocation,
  prepareInvocation,
} from "../../src/tools/index.js";

export const scope = { allowed_cidrs: ["10.0.0.0/8"], allowed_hosts: ["*.example.com", "example.com"] };
export const runtime = { outputFile: "/evidence/42-nmap/scan.xml", scanId: "42", evidenceDir: "/evidence" };

export const ok = (r: { ok: true; invocation: Invocation } | BuildFailure): Invocation => {
  if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
  return r.invocation;
};

export const argv = (tool: CompiledTool, args: unknown) => {
  const inv = ok(prepareInvocation(tool, args, { scope, runtime }));
  if (inv.kind !== "exec") throw new Error("exec expected");
  return inv.argv;
};
