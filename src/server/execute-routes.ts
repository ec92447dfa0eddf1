// Which executor serves a contract in the sidecar, and how the call is classified. A
// contract's backend picks the medium: `[command]` → process, `[http]` → http, and `[mcp]`
// by its server: `warden.file` → the file executor (tool = read|list|write|delete),
// `warden.database` → the database statement the tool names (SQL text from the operator's
// configuration, values bound from the contract's arguments), any other name → that
// declared MCP upstream. The classification (tool class and action) is what the Gate and
// policy see, so a file write is `file/write` and a database mutation `database/mutate`.
import type { DatabaseBinding, FileBinding, FileOperation, SqlParam } from "../executors/index.js";
import {
  type CompiledTool,
  classifyContract,
  prepareInvocation,
  type ToolClassification,
} from "../tools/index.js";

/** The pseudo-servers of `[mcp]` contracts that the sidecar serves itself. */
export const FILE_SERVER = "warden.file";
export const DATABASE_SERVER = "warden.database";

const FILE_OPS = ["read", "list", "write", "delete"] as const;
type FileOp = (typeof FILE_OPS)[number];

export interface StatementSpec {
  connection: string;
  sql: string;
  params: readonly string[];
  action: "query" | "mutate" | "ddl";
}

/** What the deployment declared: statements by name and upstream names. */
export interface ExecutorDeclarations {
  statements: Readonly<Record<string, StatementSpec>>;
  upstreams: readonly string[];
  file: boolean;
}

export type Route =
  | { kind: "process" | "http" }
  | { kind: "file"; op: FileOp }
  | { kind: "database"; statement: StatementSpec; name: string }
  | { kind: "mcp"; upstream: string }
  | { kind: "none"; why: string };

export function routeOf(tool: CompiledTool, d: ExecutorDeclarations): Route {
  const b = tool.backend;
  if (b.kind === "exec") return { kind: "process" };
  if (b.kind === "http") return { kind: "http" };
  if (b.server === FILE_SERVER) {
    if (!(FILE_OPS as readonly string[]).includes(b.tool))
      return { kind: "none", why: `warden.file has no operation ${b.tool} (read, list, write, delete)` };
    return { kind: "file", op: b.tool as FileOp };
  }
  if (b.server === DATABASE_SERVER) {
    const st = Object.hasOwn(d.statements, b.tool) ? d.statements[b.tool] : undefined;
    if (st === undefined)
      return {
        kind: "none",
        why: `no database statement ${b.tool} is declared (executors.database.statements)`,
      };
    return { kind: "database", statement: st, name: b.tool };
  }
  if (!d.upstreams.includes(b.server))
    return { kind: "none", why: `no MCP upstream ${b.server} is declared (executors.mcp.upstreams)` };
  return { kind: "mcp", upstream: b.server };
}

/** The Gate's classification of a contract in this deployment. */
export function classifyRoute(tool: CompiledTool, d: ExecutorDeclarations): ToolClassification {
  const r = routeOf(tool, d);
  if (r.kind === "file") return { toolClass: "file", action: r.op };
  if (r.kind === "database") return { toolClass: "database", action: r.statement.action };
  return classifyContract(tool);
}

function argumentsOf(tool: CompiledTool, p: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const r = prepareInvocation(tool, p);
  if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
  if (r.invocation.kind !== "mcp") throw new Error("contract backend is not mcp");
  return r.invocation.arguments;
}

function identity(tool: CompiledTool) {
  const t = tool.contract.tool;
  return { name: t.name, version: t.version, timeoutMs: t.timeout_seconds * 1000 };
}

/** The file operation from the contract's arguments (`path`, and `content` for write). */
export function fileBinding(tool: CompiledTool, op: FileOp): FileBinding {
  return {
    ...identity(tool),
    build(p): FileOperation {
      const args = argumentsOf(tool, p);
      if (typeof args.path !== "string") throw new Error("a warden.file contract needs a string `path`");
      if (op !== "write") return { op, path: args.path };
      if (typeof args.content !== "string") throw new Error("warden.file write needs a string `content`");
      return { op, path: args.path, content: args.content, mode: "upsert" };
    },
  };
}

function sqlParam(name: string, v: unknown): SqlParam {
  if (v === undefined || v === null) return null;
  if (typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v)))
    return v;
  throw new Error(`statement parameter ${name} must be a string, number, boolean or null`);
}

/** The declared statement with its placeholders bound, in order, from the contract's arguments. */
export function databaseBinding(tool: CompiledTool, st: StatementSpec): DatabaseBinding {
  return {
    ...identity(tool),
    build(p) {
      const args = argumentsOf(tool, p);
      return { sql: st.sql, params: st.params.map((n) => sqlParam(n, args[n])) };
    },
  };
}
