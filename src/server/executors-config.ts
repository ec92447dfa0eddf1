// The sidecar's `executors:` section as the composition root takes it: file root,
// database connections (a `env:NAME` value is read from the environment at start and
// never written anywhere), MCP upstreams and pins; plus what `--check` validates
// (roots exist, SQLite files open, connection strings resolve, statements classify,
// every contract names an executor the configuration declares).
import { statSync } from "node:fs";
import { ServerError } from "../contracts/index.js";
import { classifySql, type McpServerSpec } from "../executors/index.js";
import type { RuntimeDatabaseConfig, RuntimeExecutorsConfig } from "../runtime/index.js";
import type { ContractRegistry } from "../tools/index.js";
import type { SidecarConfig } from "./config.js";
import { DATABASE_SERVER, type ExecutorDeclarations, routeOf } from "./execute-routes.js";

type Executors = SidecarConfig["executors"];

/** `env:NAME` → the variable's value (missing: ERR_SERVER_CONFIG_INVALID); anything else as is. */
export function resolveSecretText(value: string, where: string, env = process.env): string {
  if (!value.startsWith("env:")) return value;
  const name = value.slice(4);
  const v = Object.hasOwn(env, name) ? env[name] : undefined;
  if (v === undefined || v === "")
    throw new ServerError("ERR_SERVER_CONFIG_INVALID", `${where}: environment variable ${name} is not set`);
  return v;
}

function resolveRecord(
  r: Record<string, string> | undefined,
  where: string,
): Record<string, string> | undefined {
  if (r === undefined) return undefined;
  return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, resolveSecretText(v, `${where}.${k}`)]));
}

function upstreamSpecs(m: NonNullable<Executors["mcp"]>): Record<string, McpServerSpec> {
  const out: Record<string, McpServerSpec> = {};
  for (const [name, u] of Object.entries(m.upstreams)) {
    const where = `executors.mcp.upstreams.${name}`;
    if ("command" in u) {
      const env = resolveRecord(u.env, `${where}.env`);
      out[name] = {
        kind: "stdio",
        command: u.command,
        ...(u.args !== undefined ? { args: u.args } : {}),
        // Only what the operator lists (and PATH) reaches the upstream process.
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
        ...(u.cwd !== undefined ? { cwd: u.cwd } : {}),
      };
    } else {
      const headers = resolveRecord(u.headers, `${where}.headers`);
      out[name] = { kind: "http", url: u.url, ...(headers !== undefined ? { headers } : {}) };
    }
  }
  return out;
}

function databaseConfig(d: NonNullable<Executors["database"]>): Record<string, RuntimeDatabaseConfig> {
  const limits = {
    ...(d.maxRows !== undefined ? { maxRows: d.maxRows } : {}),
    ...(d.maxBytes !== undefined ? { maxBytes: d.maxBytes } : {}),
    ...(d.maxTimeoutMs !== undefined ? { maxTimeoutMs: d.maxTimeoutMs } : {}),
  };
  const out: Record<string, RuntimeDatabaseConfig> = {};
  for (const [name, c] of Object.entries(d.connections)) {
    out[name] =
      c.engine === "sqlite"
        ? { engine: "sqlite", path: c.path, ...limits }
        : {
            engine: "postgres",
            connectionString: resolveSecretText(c.url, `executors.database.connections.${name}.url`),
            poolMax: c.poolMax,
            ...limits,
          };
  }
  return out;
}

/** The file, database and MCP parts of the runtime's executor configuration. */
export function sidecarExecutorMedia(
  e: Executors,
): Pick<RuntimeExecutorsConfig, "file" | "database" | "mcp"> {
  const m = e.mcp;
  return {
    ...(e.file !== undefined ? { file: definedOnly(e.file) as RuntimeExecutorsConfig["file"] & object } : {}),
    ...(e.database !== undefined ? { database: databaseConfig(e.database) } : {}),
    ...(m !== undefined
      ? {
          mcp: {
            upstreams: upstreamSpecs(m),
            ...definedOnly({
              pins: m.pins,
              maxOutputBytes: m.maxOutputBytes,
              maxTimeoutMs: m.maxTimeoutMs,
              requestTimeoutMs: m.requestTimeoutMs,
              onFlagged: m.onFlagged,
            }),
          },
        }
      : {}),
  };
}

function definedOnly<T extends object>(o: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as never;
}

/** What the configuration declares, for routing and classifying contracts. */
export function executorDeclarations(e: Executors): ExecutorDeclarations {
  return {
    statements: e.database?.statements ?? {},
    upstreams: Object.keys(e.mcp?.upstreams ?? {}),
    file: e.file !== undefined,
  };
}

export interface ExecutorProblem {
  what: string;
  message: string;
}

/** `--check`: problems with the declared executors and the contracts that use them. */
export function checkExecutors(e: Executors, contracts: ContractRegistry | undefined): ExecutorProblem[] {
  const problems: ExecutorProblem[] = [];
  const attempt = (what: string, fn: () => void) => {
    try {
      fn();
    } catch (err) {
      problems.push({ what, message: (err as Error).message });
    }
  };
  if (e.file) {
    const root = e.file.root;
    attempt("executors.file.root", () => {
      if (!statSync(root).isDirectory()) throw new Error(`${root} is not a directory`);
    });
  }
  for (const [name, c] of Object.entries(e.database?.connections ?? {})) {
    const what = `executors.database.connections.${name}`;
    if (c.engine === "sqlite")
      attempt(what, () => {
        if (!statSync(c.path).isFile()) throw new Error(`${c.path} is not a file`);
      });
    else attempt(what, () => resolveSecretText(c.url, `${what}.url`));
  }
  for (const [name, st] of Object.entries(e.database?.statements ?? {})) {
    const engine = e.database?.connections[st.connection]?.engine ?? "sqlite";
    const cls = classifySql(st.sql, engine);
    const want = { query: "read", mutate: "write", ddl: "ddl" }[st.action];
    if (!cls.ok)
      problems.push({
        what: `executors.database.statements.${name}`,
        message: `${cls.code}: ${cls.message}`,
      });
    else if (cls.class !== want)
      problems.push({
        what: `executors.database.statements.${name}`,
        message: `a ${cls.class} statement declared as action ${st.action}`,
      });
  }
  if (e.mcp) attempt("executors.mcp", () => upstreamSpecs(e.mcp!));
  const decl = executorDeclarations(e);
  for (const name of contracts?.names() ?? []) {
    const tool = contracts?.get(name);
    if (tool === undefined || tool.backend.kind !== "mcp") continue;
    const r = routeOf(tool, decl);
    if (r.kind === "none") problems.push({ what: `contracts.${name}`, message: r.why });
    else if (r.kind === "file" && !decl.file)
      problems.push({ what: `contracts.${name}`, message: "warden.file needs executors.file" });
    else if (tool.backend.server === DATABASE_SERVER && r.kind === "database") {
      const fields = new Set(tool.backend.fieldMap.values());
      for (const p of r.statement.params) {
        if (!fields.has(p))
          problems.push({
            what: `contracts.${name}`,
            message: `statement ${r.name} binds ${p}, not an argument`,
          });
      }
    }
  }
  return problems;
}
