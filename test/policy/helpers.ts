// Builders for policy inputs in tests: a parsed GateRequest plus empty session facts.
import { GateRequest, type GateRequestInput, type TaintLabel } from "../../src/contracts/index.js";
import type { PolicyInput, PolicySessionFacts } from "../../src/policy/index.js";

export function emptySession(over: Partial<PolicySessionFacts> = {}): PolicySessionFacts {
  return {
    runId: "run-1",
    counters: { proposed: 0, allowed: 0, denied: 0, deferred: 0, executed: 0, stepUps: 0, modified: 0 },
    perToolCalls: {},
    dataClassificationsSeen: [],
    quarantined: false,
    recentEvents: [],
    ...over,
  };
}

export interface InputOptions extends Partial<Omit<PolicyInput, "request">> {
  request?: Partial<GateRequestInput>;
}

/** A PolicyInput for `toolClass:action` with `parameters`; the effective taint defaults to the request's labels. */
export function mkInput(
  toolClass: string,
  action: string,
  parameters: Record<string, unknown> = {},
  opts: InputOptions = {},
): PolicyInput {
  const request = GateRequest.parse({
    principalId: "agent-1",
    runId: "run-1",
    toolClass,
    action,
    parameters,
    ...opts.request,
  });
  const { request: _r, ...rest } = opts;
  return {
    request,
    principal: { id: request.principalId, roles: [] },
    taint: request.taintLabels,
    session: emptySession(),
    ...rest,
  };
}

export function taint(...sources: TaintLabel["source"][]): TaintLabel[] {
  return sources.map((source) => ({ source, origin: `test:${source}` }));
}
