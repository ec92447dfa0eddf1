// `warden exec`: gate and execute one call (a GateRequest naming a contract or a built-in
// file tool) and print the decision and the evidence envelope as JSON. The call file
// cannot choose who it acts as (the principal is --principal) nor relabel what it does
// (toolClass/action, when given, must be the tool's own; otherwise they are filled in),
// so a POST contract cannot pass as an `http`/`get` request.
// Exit codes: 0 the call ran and succeeded; 1 denied, or refused/failed at execution; 2 bad input.
import type { Command } from "commander";
import { CliError, GateRequest, isPlainObject, taskOutcomeOf, uuidv7 } from "../../contracts/index.js";
import { faultOf, ticketOf } from "../../gate/index.js";
import { journalSummary } from "../agent-run.js";
import { type CliContext, EXIT, readJsonFile } from "../io.js";
import { addOptions, defineOptions, type OptionsOf } from "../options.js";
import { openRuntime, type Runtime, type RuntimeResult } from "../runtime.js";
import { addRuntimeOptions, type RuntimeFlags, runtimeOptions } from "./run.js";
import { SUMMARY } from "./summaries.js";

const EXEC_OPTIONS = defineOptions({
  call: {
    flags: "--call <file>",
    description: "the call: a GateRequest JSON naming a tool",
    kind: "value",
    required: true,
  },
});

type ExecFlags = RuntimeFlags & OptionsOf<typeof EXEC_OPTIONS>;

/** The call file completed from configuration and the tool's contract, then parsed as a GateRequest. */
export function completeCall(raw: unknown, rt: Pick<Runtime, "principalId" | "classify">): GateRequest {
  if (!isPlainObject(raw))
    throw new CliError("ERR_CLI_INPUT", "the call must be a JSON object (a GateRequest)");
  if (typeof raw.tool !== "string")
    throw new CliError("ERR_CLI_INPUT", "the call must name a tool (a contract or a built-in file tool)");
  if (raw.principalId !== undefined && raw.principalId !== rt.principalId) {
    throw new CliError(
      "ERR_CLI_INPUT",
      "the call's principalId differs from --principal; the principal comes from the command line",
    );
  }
  const call: Record<string, unknown> = { ...raw, principalId: rt.principalId };
  const own = rt.classify(raw.tool);
  if (own !== undefined) {
    for (const k of ["toolClass", "action"] as const) {
      if (call[k] !== undefined && call[k] !== own[k])
        throw new CliError(
          "ERR_CLI_INPUT",
          `${k} ${String(call[k])} does not match tool ${raw.tool} (${own[k]})`,
        );
      call[k] = own[k];
    }
  }
  call.runId ??= `exec-${uuidv7()}`;
  const parsed = GateRequest.safeParse(call);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new CliError(
      "ERR_CLI_INPUT",
      `the call is not a valid GateRequest at ${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}`,
    );
  }
  return parsed.data;
}

function resultView(r: RuntimeResult) {
  return r.ok
    ? { ok: true, output: r.output, taint: r.taint.map((t) => t.source) }
    : {
        ok: false,
        code: r.code,
        message: r.message,
        ...(r.output !== undefined ? { output: r.output } : {}),
      };
}

export function registerExec(program: Command, ctx: CliContext): void {
  addOptions(addRuntimeOptions(program.command("exec").description(SUMMARY.exec)), EXEC_OPTIONS).action(
    async (f: ExecFlags) => {
      const raw = readJsonFile(f.call);
      const rt = await openRuntime(runtimeOptions(f));
      try {
        const request = completeCall(raw, rt);
        const o = await rt.gate.authorize(request);
        const ticket = ticketOf(o);
        const result = ticket !== undefined ? await rt.execute(ticket) : null;
        if (result !== null && o.decisionId !== null) {
          await rt.gate.recordResult(o.decisionId, {
            outcome: taskOutcomeOf(result.ok, result.ok ? undefined : result.code),
            ...(result.ok
              ? {
                  taintLabels: result.taint,
                  data: result.output,
                  ...(result.evidence.output_hash !== null
                    ? { outputHash: result.evidence.output_hash }
                    : {}),
                }
              : {}),
          });
        }
        const journal = await journalSummary(rt);
        if (result?.ok !== true || !journal.verified) ctx.exitCode = EXIT.failed;
        ctx.io.out(
          `${JSON.stringify(
            {
              runId: request.runId,
              tool: request.tool,
              decision: {
                decisionId: o.decisionId,
                decision: o.decision,
                policyDecision: o.policyDecision,
                reasonCodes: o.reasonCodes,
                matchedRules: o.matchedRules.map((m) => ({
                  id: m.id,
                  decision: m.decision,
                  ...(m.reason !== undefined ? { reason: m.reason } : {}),
                })),
                parameters: o.parameters,
                taint: o.taint.map((t) => t.source),
                ...(faultOf(o) !== undefined ? { fault: faultOf(o) } : {}),
              },
              executed: result !== null,
              result: result === null ? null : resultView(result),
              evidence: result?.evidence ?? null,
              journal,
              key: rt.key,
            },
            null,
            2,
          )}\n`,
        );
      } finally {
        await rt.close();
      }
    },
  );
}
