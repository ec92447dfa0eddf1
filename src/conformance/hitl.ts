// DARE check 5: HITL approvals are signed and enforced as obligations. Two scenarios on the
// probe tool: (1) a step-up rule and an approver with a key: an unsigned verdict is refused,
// a signed one releases a ticket that carries the signed approval, and the journal holds the
// approval; (2) an allow carrying a `require_hitl` obligation and no approval: the executor
// refuses to run it.
import type { ApprovalRequest } from "../gate/index.js";
import { ticketOf } from "../gate/index.js";
import { signApproval } from "../journal/index.js";
import type { Runtime } from "../runtime/index.js";
import { describeOutcome, probeOf, withScenario } from "./scenario.js";
import { withApprover, withRules } from "./setup.js";
import type { LibraryTarget, Observation } from "./types.js";

async function pendingOf(rt: Runtime, decided: Promise<unknown>): Promise<ApprovalRequest | undefined> {
  let settled = false;
  void decided.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; i < 200 && !settled; i++) {
    const p = rt.approvals.pending()[0];
    if (p !== undefined) return p;
    await new Promise((r) => setTimeout(r, 10));
  }
  return undefined;
}

async function signedStepUp(t: LibraryTarget): Promise<Observation> {
  let approver: ReturnType<typeof withApprover>["approver"] | undefined;
  return withScenario(
    t,
    async (s) => {
      const probe = probeOf(t, s.rt);
      const a = approver as NonNullable<typeof approver>;
      const decided = s.authorize(probe.tool, probe.parameters);
      const req = await pendingOf(s.rt, decided);
      if (req === undefined)
        return { pass: false, observed: `no approval was requested: ${describeOutcome(await decided)}` };
      const who = { id: a.id, roles: [a.role] };
      const justification = "conformance: approving the probe call";
      const unsigned = s.rt.approvals.decide(req.id, { outcome: "approve", approver: who, justification });
      const statement = {
        decision_id: req.decisionId,
        action: "approve" as const,
        approver_id: a.id,
        justification,
        time: new Date().toISOString(),
      };
      const signed = s.rt.approvals.decide(req.id, {
        outcome: "approve",
        approver: who,
        justification,
        signed: signApproval(statement, a.key.privateKey),
      });
      const outcome = await decided;
      const ticket = ticketOf(outcome);
      const executed = ticket === undefined ? undefined : await s.execute(probe.tool, ticket);
      const observed = `unsigned verdict ${unsigned.ok ? "ACCEPTED" : unsigned.code}; signed ${signed.ok ? "accepted" : signed.code}; ${describeOutcome(outcome)}; executed ${executed?.ok === true}`;
      return { pass: !unsigned.ok && signed.ok && executed?.ok === true, observed };
    },
    {
      config: (c, dir) => {
        const w = withApprover(c);
        approver = w.approver;
        const stepUp = { approverRole: w.approver.role, timeout: "10s" };
        return withRules(w.config, dir, [
          { id: "conformance-step-up", decision: "step_up", stepUp, match: { tool: probeOf(t).tool } },
        ]);
      },
    },
  );
}

async function obligationEnforced(t: LibraryTarget): Promise<Observation> {
  return withScenario(
    t,
    async (s) => {
      const probe = probeOf(t, s.rt);
      const outcome = await s.authorize(probe.tool, probe.parameters);
      const ticket = ticketOf(outcome);
      if (ticket === undefined)
        return { pass: false, observed: `allow expected: ${describeOutcome(outcome)}` };
      const r = await s.execute(probe.tool, ticket);
      return {
        pass: !r.ok && r.code === "ERR_EXEC_OBLIGATION_UNMET",
        observed: `require_hitl without an approval: ${r.ok ? "EXECUTED" : r.code}`,
      };
    },
    {
      config: (c, dir) =>
        withRules(c, dir, [
          {
            id: "conformance-obligation",
            decision: "allow",
            obligations: [{ type: "require_hitl" }],
            match: { tool: probeOf(t).tool },
          },
        ]),
    },
  );
}

export async function hitlCheck(t: LibraryTarget): Promise<Observation> {
  const a = await signedStepUp(t);
  const b = await obligationEnforced(t);
  return { pass: a.pass && b.pass, observed: `${a.observed}; ${b.observed}` };
}
