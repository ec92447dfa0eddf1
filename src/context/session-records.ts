// What a session writes for a call, built from the call alone (no session state): the
// `call.decided` event body of its chain, and the behavioural window's views of its
// decision and of its result.
import type { Decision, GateRequest, TaintLabel } from "../contracts/index.js";
import type { WindowEvent } from "./behaviour.js";
import type { EventBody, QuarantineTrigger, SessionCounters } from "./chain.js";
import type { Prepared } from "./facts.js";
import { taintSources } from "./taint.js";
import { defined, iso } from "./util.js";

type DecidedBody = Extract<EventBody, { type: "call.decided" }>;

/** The chain's record of a call's decision. */
export function decidedBody(
  call: number,
  prepared: Prepared,
  decision: Decision,
  reasonCodes: readonly string[],
): DecidedBody {
  const { request } = prepared;
  // Built with only its defined members (no `defined` copy): `tool` is the optional one.
  const body: DecidedBody = {
    type: "call.decided",
    call,
    toolClass: request.toolClass,
    action: request.action,
    principalId: request.principalId,
    requestHash: prepared.requestHash,
    decision,
    reasonCodes: [...reasonCodes],
    taint: prepared.effectiveTaint,
    provenance: prepared.provenance.map((h) => ({ path: h.path, kind: h.kind, outputs: h.outputs })),
    behaviour: prepared.behaviour.map((m) => m.ruleId),
  };
  if (request.tool !== undefined) body.tool = request.tool;
  return body;
}

/** The behavioural window's view of a call's decision (or its resolution). */
export function callWindowEvent(
  seq: number,
  prepared: Prepared,
  signals: WindowEvent["signals"],
  decision: Decision,
): WindowEvent {
  const { request } = prepared;
  const e: WindowEvent = {
    seq,
    kind: "call",
    toolClass: request.toolClass,
    action: request.action,
    decision,
    taint: taintSources(prepared.effectiveTaint),
    signals,
  };
  if (request.tool !== undefined) e.tool = request.tool;
  return e;
}

/** The behavioural window's view of a call's result. */
export function resultWindowEvent(seq: number, request: GateRequest, taint: TaintLabel[]): WindowEvent {
  return defined({
    seq,
    kind: "result" as const,
    toolClass: request.toolClass,
    action: request.action,
    tool: request.tool,
    taint: taintSources(taint),
    signals: [],
  });
}

/** A quarantine's trigger as the chain and the principal record it. */
export function quarantineTrigger(
  cause: Pick<QuarantineTrigger, "type" | "reason" | "ruleId">,
  counters: SessionCounters,
  matched: WindowEvent[],
  at: number,
): QuarantineTrigger {
  return defined({
    ...cause,
    counters: { ...counters },
    matchedEvents: structuredClone(matched),
    at: iso(at),
  });
}
