// Bindings from a compiled tool contract to an executor. The invocation is built
// by the tools layer's template (prepareInvocation re-validates the ticket's
// parameters, then fills the template), so the model never writes argv, URLs or
// MCP arguments; this module only adapts the result to each executor's input.
import {
  type CompiledTool,
  type HttpInvocation,
  prepareInvocation,
  resolveHttpRequest,
  secretEnvName,
  secretValue,
} from "../tools/index.js";
import type { HttpBinding, HttpRequestSpec } from "./http.js";
import type { McpBinding } from "./mcp.js";
import type { ProcessBinding } from "./process.js";
import type { AttemptContext } from "./runtime.js";
import { defaultSecretProviders, type SecretProvider } from "./secret-provider.js";

export interface ContractBindingOptions {
  /**
   * Where secret values come from (default process.env): `WARDEN_SECRET_<NAME>`, or the
   * ToolClad alias `TOOLCLAD_SECRET_<NAME>` when the WARDEN name is absent.
   */
  secretEnv?: Readonly<Record<string, string | undefined>>;
  /** Environment variable names a process tool may receive. */
  processEnv?: readonly string[];
  /**
   * Providers of the contract's `[secrets.<name>] jit = true` secrets, by name (default
   * `env` and `file`; add e.g. `vault`). A provider the deployment lacks fails the call.
   */
  secretProviders?: Readonly<Record<string, SecretProvider>>;
}

export type ContractBinding =
  | { kind: "process"; binding: ProcessBinding }
  | { kind: "http"; binding: HttpBinding }
  | { kind: "mcp"; binding: McpBinding };

function prepare(tool: CompiledTool, parameters: Readonly<Record<string, unknown>>) {
  const r = prepareInvocation(tool, parameters);
  if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
  return r.invocation;
}

/** The request with its secrets substituted from `env`; their values go to the masker. */
function httpSpec(inv: HttpInvocation, env: Readonly<Record<string, string | undefined>>): HttpRequestSpec {
  const resolved = resolveHttpRequest(inv, env);
  if (!resolved.ok) throw new Error(`${resolved.code}: ${resolved.message}`);
  // The values actually sent (same precedence as resolveHttpRequest): the executor masks them.
  const secrets = inv.secrets.map((s) => secretValue(s, env)).filter((v): v is string => v !== undefined);
  return {
    method: resolved.request.method,
    url: resolved.request.url,
    headers: resolved.request.headers,
    ...(resolved.request.body !== undefined ? { body: resolved.request.body } : {}),
    secrets,
    successStatus: inv.successStatus,
  };
}

/**
 * This call's secret environment: the JIT secrets fetched now from their providers (named
 * by the call's ticket), the others from `env`. It lives only while the request is built.
 */
async function jitEnv(
  tool: CompiledTool,
  inv: HttpInvocation,
  o: {
    env: Readonly<Record<string, string | undefined>>;
    ctx: AttemptContext | undefined;
    providers: Readonly<Record<string, SecretProvider>> | undefined;
  },
): Promise<Record<string, string | undefined>> {
  if (o.ctx === undefined) throw new Error("ERR_TOOL_SECRET_MISSING: a JIT secret needs the call's ticket");
  const providers = o.providers ?? defaultSecretProviders();
  const declared = tool.contract.secrets ?? {};
  const out: Record<string, string | undefined> = {};
  for (const name of inv.secrets) {
    const key = secretEnvName(name);
    const spec = Object.hasOwn(declared, name) ? declared[name] : undefined;
    if (spec === undefined) {
      out[key] = secretValue(name, o.env);
      continue;
    }
    const provider = Object.hasOwn(providers, spec.provider) ? providers[spec.provider] : undefined;
    const value = await provider?.get({
      name,
      ref: spec.ref,
      tool: tool.name,
      runId: o.ctx.ticket.runId,
      decisionId: o.ctx.ticket.decisionId,
      signal: o.ctx.signal,
    });
    if (value === undefined || value === "")
      throw new Error(
        `ERR_TOOL_SECRET_MISSING: JIT secret '${name}' is not available from '${spec.provider}'`,
      );
    out[key] = value;
  }
  return out;
}

/** The executor binding for a compiled contract, chosen by its backend. */
export function bindingForContract(
  tool: CompiledTool,
  options: ContractBindingOptions = {},
): ContractBinding {
  const identity = {
    name: tool.contract.tool.name,
    version: tool.contract.tool.version,
    timeoutMs: tool.contract.tool.timeout_seconds * 1000,
  };
  const env = options.secretEnv ?? process.env;
  switch (tool.backend.kind) {
    case "exec":
      return {
        kind: "process",
        binding: {
          ...identity,
          riskTier: tool.contract.tool.risk_tier,
          build: (p) => {
            const inv = prepare(tool, p);
            if (inv.kind !== "exec") throw new Error("contract backend is not exec");
            return {
              argv: inv.argv,
              ...(options.processEnv !== undefined ? { env: options.processEnv } : {}),
            };
          },
        },
      };
    case "http":
      return {
        kind: "http",
        binding: {
          ...identity,
          allowedHosts: tool.contract.scope?.allowed_hosts ?? [],
          deniedHosts: tool.contract.scope?.denied_hosts ?? [],
          allowedCidrs: tool.contract.scope?.allowed_cidrs ?? [],
          deniedCidrs: tool.contract.scope?.denied_cidrs ?? [],
          build: (p, ctx) => {
            const inv = prepare(tool, p);
            if (inv.kind !== "http") throw new Error("contract backend is not http");
            const jit = tool.contract.secrets ?? {};
            if (!inv.secrets.some((s) => Object.hasOwn(jit, s))) return httpSpec(inv, env);
            return jitEnv(tool, inv, { env, ctx, providers: options.secretProviders }).then((e) =>
              httpSpec(inv, e),
            );
          },
        },
      };
    case "mcp": {
      const plan = tool.contract.mcp;
      return {
        kind: "mcp",
        binding: {
          ...identity,
          server: plan?.server ?? "",
          tool: plan?.tool ?? "",
          build: (p) => {
            const inv = prepare(tool, p);
            if (inv.kind !== "mcp") throw new Error("contract backend is not mcp");
            return { ...inv.arguments };
          },
        },
      };
    }
  }
}
