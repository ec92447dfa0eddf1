// Cross-agent context (OATS §10.4): what a message from a run hands to the run it starts
// at the recipient. Built by the gate from the sender's session, never from the message
// (a tainted sender cannot declare itself clean): the user's original request as hash
// and bounded prefix (the user's text, never the model's), the run's counters and last
// actions, every taint label it saw (inherited ones included) and its data classifications.
import type { Session, SessionFacts } from "../context/index.js";
import type { CrossAgentContext } from "./events.js";

export const SUMMARY_CHARS = 200;
const RECENT = 16;

export function contextOf(session: Session, facts: SessionFacts, depth: number): CrossAgentContext {
  const original = session.originalRequest;
  const hash = session.originalRequestHash;
  const c = facts.counters;
  return {
    parent_run: session.runId,
    parent_principal: session.principalId,
    depth,
    ...(hash !== undefined ? { original_request_hash: hash } : {}),
    ...(original !== undefined ? { original_request_summary: summary(original) } : {}),
    prior_actions: {
      proposed: c.proposed,
      allowed: c.allowed,
      denied: c.denied,
      executed: c.executed,
      recent: facts.recentEvents.slice(-RECENT).map((e) => ({
        toolClass: e.toolClass,
        action: e.action,
        ...(e.tool !== undefined ? { tool: e.tool } : {}),
        decision: e.decision,
      })),
    },
    taint: session.taintSeen(),
    classifications: [...facts.dataClassificationsSeen],
  };
}

/** A bounded prefix that never ends in half a surrogate pair. */
function summary(text: string): string {
  const s = text.slice(0, SUMMARY_CHARS);
  return /[\uD800-\uDBFF]$/.test(s) ? s.slice(0, -1) : s;
}

/** The depth of a message from `runId`: one more than the run's own (0 for a run nobody delegated). */
export function recipientDepth(
  depths: { depthOf(runId: string): number | undefined },
  runId: string,
): number {
  return (depths.depthOf(runId) ?? 0) + 1;
}
