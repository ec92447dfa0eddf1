// DARE's five conformance checks ("Conformance Checks": the minimum must-pass behaviours),
// each an executed scenario on a fresh runtime of the deployment under test.
import { ticketOf } from "../gate/index.js";
import { type JournalEntry, signHead } from "../journal/index.js";
import { replayCheck } from "./dare-replay.js";
import { hitlCheck } from "./hitl.js";
import { describeOutcome, probeOf, unknownTool, withScenario } from "./scenario.js";
import type { Check, LibraryTarget, Observation } from "./types.js";
import { journalVerifiesOverHttp, unknownToolOverHttp } from "./url-checks.js";

const SECTION = "DARE, Conformance Checks";

const byType = (entries: readonly JournalEntry[], type: string) => entries.filter((e) => e.type === type);

/** An allowed call's evidence names a decision record journaled before it, carrying the request hash. */
async function decisionBeforeExecution(t: LibraryTarget): Promise<Observation> {
  const linked = await withScenario(t, async (s) => {
    const probe = probeOf(t, s.rt);
    const { outcome, executed } = await s.call(probe.tool, probe.parameters);
    if (!executed?.ok)
      return { pass: false, observed: `probe ${probe.tool}: ${describeOutcome(outcome)}, not executed` };
    const entries = await s.entries();
    const evidence = byType(entries, "warden.executor.evidence").find(
      (e) => e.body.decision_id === outcome.decisionId,
    );
    const decision = byType(entries, "warden.gate.decision").find(
      (e) => e.body.decision_id === outcome.decisionId,
    );
    const requestHash = (decision?.body.dare as { inputs?: { request_hash?: unknown } } | undefined)?.inputs
      ?.request_hash;
    const ok =
      evidence !== undefined &&
      decision !== undefined &&
      decision.seq < evidence.seq &&
      typeof requestHash === "string";
    return {
      pass: ok,
      observed: ok
        ? `decision seq ${decision.seq} (request_hash ${String(requestHash).slice(0, 19)}…) before evidence seq ${evidence.seq}`
        : `decision record ${decision ? `seq ${decision.seq}` : "missing"}, evidence ${evidence ? `seq ${evidence.seq}` : "missing"}`,
    };
  });
  if (!linked.pass) return linked;
  // The journal unavailable: the Gate must fail closed, and no ticket may reach an executor.
  const closed = await withScenario(t, async (s) => {
    const probe = probeOf(t, s.rt);
    await s.rt.journal.close();
    const outcome = await s.authorize(probe.tool, probe.parameters).catch((e: unknown) => e);
    if (outcome instanceof Error)
      return { pass: true, observed: `authorize threw ${outcome.message.slice(0, 80)}` };
    const ticket = ticketOf(outcome as never);
    if (ticket === undefined)
      return { pass: true, observed: `journal closed → ${describeOutcome(outcome as never)}` };
    const r = await s.execute(probe.tool, ticket).catch((e: unknown) => ({ ok: false, code: String(e) }));
    return {
      pass: !r.ok,
      observed: `journal closed → a ticket was issued; executor ${r.ok ? "ran" : "refused"}`,
    };
  });
  return { pass: closed.pass, observed: `${linked.observed}; ${closed.observed}` };
}

/** Only a live Gate ticket reaches a tool: a copy, a plain object and a used ticket are refused. */
async function noBypass(t: LibraryTarget): Promise<Observation> {
  return withScenario(t, async (s) => {
    const probe = probeOf(t, s.rt);
    const outcome = await s.authorize(probe.tool, probe.parameters);
    const ticket = ticketOf(outcome);
    if (ticket === undefined)
      return { pass: false, observed: `probe ${probe.tool}: ${describeOutcome(outcome)}` };
    const copy = Object.assign(Object.create(Object.getPrototypeOf(ticket) as object) as object, ticket);
    const forged = await s.execute(probe.tool, copy);
    const plain = await s.execute(probe.tool, JSON.parse(JSON.stringify(ticket)));
    const first = await s.execute(probe.tool, ticket);
    const again = await s.execute(probe.tool, ticket);
    const code = (r: { ok: boolean; code?: string }) => (r.ok ? "EXECUTED" : (r.code ?? "refused"));
    const observed = `copy ${code(forged)}, plain object ${code(plain)}, first use ${code(first)}, reuse ${code(again)}`;
    return { pass: !forged.ok && !plain.ok && first.ok && !again.ok, observed };
  });
}

/** The journal verifies; an altered entry and a removed entry are each detected. */
async function tamperEvident(t: LibraryTarget): Promise<Observation> {
  return withScenario(t, async (s) => {
    const probe = probeOf(t, s.rt);
    await s.call(probe.tool, probe.parameters);
    await s.authorize(unknownTool(), {});
    const own = await s.verify();
    if (!own.ok)
      return {
        pass: false,
        observed: `the journal does not verify: ${own.failure.reason} at ${own.failure.seq}`,
      };
    const entries = await s.entries();
    const denied = entries.find((e) => e.type === "warden.gate.decision" && e.body.decision === "deny");
    if (denied === undefined) return { pass: false, observed: "no deny decision journaled" };
    const altered = entries.map((e) =>
      e.seq === denied.seq ? { ...e, body: { ...e.body, decision: "allow" } } : e,
    );
    const middle = entries[Math.floor(entries.length / 2)] as JournalEntry;
    const removed = entries.filter((e) => e.seq !== middle.seq);
    const head = await s.rt.journal.head();
    const signed = head === null ? undefined : signHead(head, s.rt.signer);
    const truncated = entries.slice(0, -1);
    const a = await s.verify(altered);
    const r = await s.verify(removed);
    const cut = await s.verify(truncated, signed);
    const why = (v: typeof a) => (v.ok ? "NOT DETECTED" : `${v.failure.reason} at ${v.failure.seq}`);
    return {
      pass: !a.ok && !r.ok && !cut.ok,
      observed: `${own.checked} entries verify; deny→allow: ${why(a)}; entry ${middle.seq} removed: ${why(r)}; last entry cut (signed head kept): ${why(cut)}`,
    };
  });
}

export const DARE_CHECKS: readonly Check[] = [
  {
    spec: "dare",
    id: "DARE-1",
    title: "no tool execution without a policy decision record linked to the request hash",
    section: SECTION,
    library: decisionBeforeExecution,
  },
  {
    spec: "dare",
    id: "DARE-2",
    title: "no bypass path from runtime to tools (only a live Gate ticket executes)",
    section: SECTION,
    library: noBypass,
    url: unknownToolOverHttp,
  },
  {
    spec: "dare",
    id: "DARE-3",
    title: "replay reproduces the run from recorded snapshots and the pinned bundle",
    section: SECTION,
    library: replayCheck,
  },
  {
    spec: "dare",
    id: "DARE-4",
    title: "the audit ledger is hash-chained and tampering is detected",
    section: SECTION,
    library: tamperEvident,
    url: journalVerifiesOverHttp,
  },
  {
    spec: "dare",
    id: "DARE-5",
    title: "HITL approvals are signed and enforced as obligations",
    section: SECTION,
    library: hitlCheck,
  },
];
