// Library mode's executor route: a Gate ticket's tool picks its contract, the contract's
// backend picks the composed runtime's executor (exec → process, http → http), the
// executors layer builds the invocation from the contract's template (the model never
// writes argv or URLs), and the output is parsed against the contract's output schema
// before anyone sees it. Other backends (file, database, MCP) are served by the sidecar or
// by a route the caller passes (`LibraryOptions.route`); here they are a coded refusal.
import type { Sha256Hash } from "../contracts/index.js";
import {
  bindingForContract,
  type ExecutionResult,
  type HttpOutput,
  type ProcessOutput,
} from "../executors/index.js";
import type { ExecutionTicket } from "../gate/index.js";
import type { ExecutorRoute, GovernedResult } from "../loop/index.js";
import type { RuntimeExecutors } from "../runtime/index.js";
import { type CompiledTool, parseOutput } from "../tools/index.js";

type Evidence = { duration_ms: number; output_hash: Sha256Hash | null };

function refusal(message: string): GovernedResult {
  return { ok: false, code: "ERR_ADAPTER_NO_EXECUTOR", message };
}

function decode(bytes: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return "(not UTF-8)";
  }
}

/** The contract-checked view of one execution (the same shape the loop's executor port takes). */
function viewOf(
  tool: CompiledTool,
  r: ExecutionResult<HttpOutput> | ExecutionResult<ProcessOutput>,
): GovernedResult {
  const evidence: Evidence = r.evidence ?? { duration_ms: 0, output_hash: null };
  const usage = r.usage !== undefined ? { usage: r.usage } : {};
  if (!r.ok) {
    const o = r.output;
    const detail = o === undefined ? "" : `: ${decode("body" in o ? o.body : o.stderr).slice(0, 200)}`;
    return {
      ok: false,
      code: r.code,
      message: `${r.message}${detail}`,
      ...(r.evidence ? { evidence } : {}),
      ...usage,
    };
  }
  const raw = "body" in r.output ? r.output.body : r.output.stdout;
  const parsed = parseOutput(tool, raw);
  if (!parsed.ok) return { ok: false, code: parsed.code, message: parsed.message, evidence, ...usage };
  return { ok: true, output: parsed.value, evidence, taint: r.taint, ...usage };
}

/** Routes tickets for http and exec contracts to the runtime's executors. */
export function contractRoute(
  lookup: (name: string) => CompiledTool | undefined,
  executors: RuntimeExecutors,
): ExecutorRoute<ExecutionTicket> {
  return (ticket, options) => {
    const tool = ticket.tool === undefined ? undefined : lookup(ticket.tool);
    if (tool === undefined) return Promise.resolve(refusal("no contract names this ticket's tool"));
    const b = bindingForContract(tool);
    const call = options.signal === undefined ? {} : { signal: options.signal };
    if (b.kind === "http") {
      const http = executors.http;
      if (http === undefined) return Promise.resolve(refusal("the runtime has no http executor"));
      return http.execute(ticket, b.binding, call).then((r) => viewOf(tool, r));
    }
    if (b.kind === "process") {
      const proc = executors.process;
      if (proc === undefined) return Promise.resolve(refusal("the runtime has no process executor"));
      return proc.execute(ticket, b.binding, call).then((r) => viewOf(tool, r));
    }
    return Promise.resolve(refusal(`${b.kind} contracts need a route (LibraryOptions.route) or the sidecar`));
  };
}
