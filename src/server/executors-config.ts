// The sidecar's `executors:` section as the composition root takes it: file root,
// database connections (a `env:NAME` value is read from the environment at start and
// never written anywhere), MCP upstreams and pins; plus what `--check` validates
// (roots exist, SQLite files open, connection strings resolve, statements classify,
// every contract names an executor the configuration declares, the process sandbox's
// tiers are available on this machine: sandbox-config.ts).
import { statSync } from "node:fs";
import { ServerError } from "../contracts/index.js";
import { classifySql } from "../executors/index.js";
import { resolveSecretText, runtimeMcpConfig } from "../mcp-gateway/index.js";
import type { RuntimeDatabaseConfig, RuntimeExecutorsConfig, RuntimeMcpConfig } from "../runtime/index.js";
import type { ContractRegistry } from "../tools/index.js";
import type { SidecarConfig } from "./config.js";
import { DATABASE_SERVER, type ExecutorDeclarations, routeOf } from "./execute-routes.js";
import { sandboxProblems } from "./sandbox-config.js";

type Executors = SidecarConfig["executors"];

const fail = (m: string) => new ServerError("ERR_SERVER_CONFIG_INVALID", m);

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
            connectionString: resolveSecretText(c.url, `executors.database.connections.${name}.url`, fail),
            poolMax: c.poolMax,
            ...limits,
          };
  }
  return out;
}

function mcpConfig(m: NonNullable<Executors["mcp"]>): RuntimeMcpConfig {
  try {
    return runtimeMcpConfig(m.upstreams, m, "executors.mcp.upstreams");
  } catch (err) {
    throw fail((err as Error).message);
  }
}

/** The file, database and MCP parts of the runtime's executor configuration. */
export function sidecarExecutorMedia(
  e: Executors,
): Pick<RuntimeExecutorsConfig, "file" | "database" | "mcp"> {
  return {
    ...(e.file !== undefined ? { file: definedOnly(e.file) as RuntimeExecutorsConfig["file"] & object } : {}),
    ...(e.database !== undefined ? { database: databaseConfig(e.database) } : {}),
    ...(e.mcp !== undefined ? { mcp: mcpConfig(e.mcp) } : {}),
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
    else attempt(what, () => resolveSecretText(c.url, `${what}.url`, fail));
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
  if (e.mcp) attempt("executors.mcp", () => mcpConfig(e.mcp!));
  if (e.process?.sandbox) problems.push(...sandboxProblems(e.process.sandbox));
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
