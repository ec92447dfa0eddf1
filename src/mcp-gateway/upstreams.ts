// How a deployment declares MCP upstreams (the gateway's `upstreams:` and the sidecar's
// `executors.mcp`): a stdio command or a Streamable HTTP url, with secrets given as
// `env:NAME` (read from the environment at start, never written anywhere). A stdio
// upstream inherits nothing but PATH and the variables the operator lists.
import { z } from "zod";
import { McpGatewayError } from "../contracts/index.js";
import type { McpServerSpec } from "../executors/index.js";
import type { RuntimeMcpConfig } from "../runtime/index.js";

/** A connection string or header value, or `env:NAME` to read it from the environment at start. */
export const SecretText = z.string().min(1).max(4096);
const PathText = z.string().min(1).max(4096);

export const McpUpstreamSchema = z.union([
  z.strictObject({
    command: z.string().min(1).max(4096),
    args: z.array(z.string().max(4096)).max(256).optional(),
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/), SecretText).optional(),
    cwd: PathText.optional(),
  }),
  z.strictObject({
    url: z.url().max(4096),
    headers: z.record(z.string().min(1).max(256), SecretText).optional(),
  }),
]);
export type McpUpstreamConfig = z.infer<typeof McpUpstreamSchema>;

/** Upstream names: `warden.*` is reserved for the sidecar's built-in file and database servers. */
export const McpUpstreamName = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_-]{0,63}$/, "upstream names match ^[A-Za-z][A-Za-z0-9_-]{0,63}$");

export const McpLimitsSchema = z.strictObject({
  /** Largest tool result, resource or prompt an upstream may return (bytes of JSON). */
  maxOutputBytes: z
    .number()
    .int()
    .min(1)
    .max(64 * 1024 * 1024)
    .optional(),
  /** Longest a tools/call, resource read or prompt get may take. */
  maxTimeoutMs: z.number().int().min(1).max(600_000).optional(),
  /** Bounds connecting and every list request to an upstream. */
  requestTimeoutMs: z.number().int().min(100).max(600_000).optional(),
});

/**
 * `env:NAME` → the variable's value (unset or empty: a coded error naming `where`);
 * anything else as it is.
 */
export function resolveSecretText(
  value: string,
  where: string,
  fail: (message: string) => Error = (m) => new McpGatewayError("ERR_MCP_CONFIG_INVALID", m),
): string {
  if (!value.startsWith("env:")) return value;
  const name = value.slice(4);
  const v = Object.hasOwn(process.env, name) ? process.env[name] : undefined;
  if (v === undefined || v === "") throw fail(`${where}: environment variable ${name} is not set`);
  return v;
}

function resolveRecord(
  r: Record<string, string> | undefined,
  where: string,
): Record<string, string> | undefined {
  if (r === undefined) return undefined;
  return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, resolveSecretText(v, `${where}.${k}`)]));
}

/** The SDK transport specs of declared upstreams (secrets resolved now). */
export function upstreamSpecs(
  upstreams: Readonly<Record<string, McpUpstreamConfig>>,
  where: string,
): Record<string, McpServerSpec> {
  const out: Record<string, McpServerSpec> = {};
  for (const [name, u] of Object.entries(upstreams)) {
    const at = `${where}.${name}`;
    if ("command" in u) {
      const env = resolveRecord(u.env, `${at}.env`);
      out[name] = {
        kind: "stdio",
        command: u.command,
        ...(u.args !== undefined ? { args: u.args } : {}),
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
        ...(u.cwd !== undefined ? { cwd: u.cwd } : {}),
      };
    } else {
      const headers = resolveRecord(u.headers, `${at}.headers`);
      out[name] = { kind: "http", url: u.url, ...(headers !== undefined ? { headers } : {}) };
    }
  }
  return out;
}

/** Relative `cwd`s made absolute. */
export function upstreamPaths(
  upstreams: Readonly<Record<string, McpUpstreamConfig>>,
  abs: (p: string) => string,
): Record<string, McpUpstreamConfig> {
  return Object.fromEntries(
    Object.entries(upstreams).map(([n, u]) => [
      n,
      "command" in u && u.cwd !== undefined ? { ...u, cwd: abs(u.cwd) } : u,
    ]),
  );
}

/** The runtime's MCP executor configuration. */
export function runtimeMcpConfig(
  upstreams: Readonly<Record<string, McpUpstreamConfig>>,
  o: z.infer<typeof McpLimitsSchema> & {
    pins?: string | undefined;
    onFlagged?: "refuse" | "pin" | undefined;
  },
  where: string,
): RuntimeMcpConfig {
  const out: RuntimeMcpConfig = { upstreams: upstreamSpecs(upstreams, where) };
  if (o.pins !== undefined) out.pins = o.pins;
  if (o.maxOutputBytes !== undefined) out.maxOutputBytes = o.maxOutputBytes;
  if (o.maxTimeoutMs !== undefined) out.maxTimeoutMs = o.maxTimeoutMs;
  if (o.requestTimeoutMs !== undefined) out.requestTimeoutMs = o.requestTimeoutMs;
  if (o.onFlagged !== undefined) out.onFlagged = o.onFlagged;
  return out;
}
