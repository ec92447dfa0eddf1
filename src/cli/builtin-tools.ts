// Warden's built-in file tools. Tool contracts have no file backend, yet agents need
// to read files; those calls must go to the FileExecutor (sandbox root, O_NOFOLLOW,
// descriptor-relative opens), never to a `cat` process. The built-ins are declared as
// ordinary contracts so the Gate validates their arguments (the `path` type: no
// absolute paths, no traversal, no invisible characters) and records their schema hash
// like any other tool; their `[mcp]` section names the pseudo-server `warden.builtin`
// and is never dispatched: the runtime routes them to the FileExecutor by name.
import type { FileBinding, FileOperation } from "../executors/index.js";
import { type CompiledTool, parseContract } from "../tools/index.js";

export type BuiltinFileOp = "read" | "list" | "write" | "delete";

interface BuiltinSpec {
  op: BuiltinFileOp;
  category: "read_only" | "reversible_write" | "irreversible_write";
  description: string;
  extraArgs: string;
  output: string;
}

const PATH_ARG =
  `[args.path]\nposition = 1\ntype = "path"\nrequired = true\nmax_length = 1024\n` +
  `description = "Path relative to the sandbox root, e.g. notes/today.txt"\n`;

const SPECS: Record<string, BuiltinSpec> = {
  file_read: {
    op: "read",
    category: "read_only",
    description: "Read a UTF-8 text file inside the sandbox directory.",
    extraArgs: "",
    output: `format = "json"\n[output.schema]\ntype = "string"\n`,
  },
  file_list: {
    op: "list",
    category: "read_only",
    description: "List the entries of a directory inside the sandbox directory ('.' is the root).",
    extraArgs: "",
    output: `format = "json"\n[output.schema]\ntype = "array"\n`,
  },
  file_write: {
    op: "write",
    category: "reversible_write",
    description: "Create or replace a text file inside the sandbox directory (one line of plain text).",
    extraArgs: `[args.content]\nposition = 2\ntype = "string"\nrequired = true\nmax_length = 65536\ndescription = "The text to write"\n`,
    output: `format = "json"\n[output.schema]\ntype = "object"\n`,
  },
  file_delete: {
    op: "delete",
    category: "irreversible_write",
    description: "Delete a file inside the sandbox directory.",
    extraArgs: "",
    output: `format = "json"\n[output.schema]\ntype = "object"\n`,
  },
};

/** The names of the built-in tools; a contract directory may not reuse them. */
export const BUILTIN_TOOL_NAMES: readonly string[] = Object.keys(SPECS);

function compileBuiltin(name: string, s: BuiltinSpec): CompiledTool {
  const text =
    `[tool]\nname = "${name}"\nversion = "1.0.0"\ndescription = "${s.description}"\n` +
    `timeout_seconds = 10\ncategory = "${s.category}"\n` +
    PATH_ARG +
    s.extraArgs +
    `[mcp]\nserver = "warden.builtin"\ntool = "${name}"\n` +
    `[output]\n${s.output}`;
  const r = parseContract(text, { source: `builtin:${name}` });
  // The texts above are constants: failing to compile them is a bug, not an input error.
  if (!r.ok) throw new Error(`built-in tool ${name} does not compile: ${r.code}: ${r.message}`);
  return r.tool;
}

export interface BuiltinTool {
  tool: CompiledTool;
  op: BuiltinFileOp;
  binding: FileBinding;
}

function fileBinding(name: string, version: string, op: BuiltinFileOp): FileBinding {
  return {
    name,
    version,
    timeoutMs: 10_000,
    build(p): FileOperation {
      const path = p.path;
      if (typeof path !== "string") throw new Error("path must be a string");
      if (op === "write") {
        if (typeof p.content !== "string") throw new Error("content must be a string");
        return { op, path, content: p.content, mode: "upsert" };
      }
      return { op, path };
    },
  };
}

/** Compiles the built-in file tools (once per runtime). */
export function builtinFileTools(): Map<string, BuiltinTool> {
  const out = new Map<string, BuiltinTool>();
  for (const [name, spec] of Object.entries(SPECS)) {
    const tool = compileBuiltin(name, spec);
    out.set(name, { tool, op: spec.op, binding: fileBinding(name, tool.contract.tool.version, spec.op) });
  }
  return out;
}
