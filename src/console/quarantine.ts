// Every active quarantine for approvers (issue 37: principal quarantines of every kind and
// APAE trust rows), and the signed lifts: the APAE early lift (docs/trust.md "Early lift")
// of a trust quarantine here, a principal lift in quarantine-principal.ts, each signed in the
// page with the approver's registered browser key. The server accepts only the signed-in approver's own keys; the
// runtime checks the record (scope, episode, signature), journals it and ends the quarantine.
import type { KeyObject } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { parseStrictJson, WardenError, type WardenErrorCode } from "../contracts/index.js";
import { PRINCIPAL_LIFT_SCOPE, type QuarantineEntry } from "../runtime/index.js";
import { audit } from "./audit.js";
import { type ConsoleState, formOf, requireCsrf, requireRole, sendHtml, sessionOf } from "./context.js";
import { agentText, type Html, html } from "./html.js";
import { page } from "./layout.js";
import { principalLiftRoute, QUARANTINE_LIFT_EVENT } from "./quarantine-principal.js";
import type { ConsoleSession } from "./sessions.js";

export { QUARANTINE_LIFT_EVENT };

const access = { config: { access: "none" as const } };

/** A lift form's fields: the CSRF token, the record and signature the page fills in, the reason. */
function liftFields(s: ConsoleSession, id: string): Html {
  return html`<input type="hidden" name="csrf" value="${s.csrfToken}">
<input type="hidden" name="lift" value="">
<input type="hidden" name="signature" value="">
<label for="${id}-why">Reason (required)</label>
<input type="text" id="${id}-why" name="reason" required minlength="10" maxlength="1024" autocomplete="off">
<p class="status" role="status"></p>
<button type="submit">Sign and lift the quarantine</button>
`;
}

/** A principal quarantine's facts and, unless the trust lift ends it, its signed-lift form. */
function principalItem(st: ConsoleState, s: ConsoleSession, q: QuarantineEntry, i: number): Html {
  const matched = q.matched.map(
    (m) => `${m.toolClass}.${m.action}${m.decision === null ? "" : ` → ${m.decision}`}`,
  );
  const form =
    q.liftScope !== PRINCIPAL_LIFT_SCOPE
      ? html`<p class="muted">Lifted with the agent's trust quarantine (below).</p>`
      : html`<form method="post" action="${st.base}/quarantine/lift-principal" class="lift-principal" data-principal="${q.principalId}" data-quarantine-id="${q.quarantineId ?? ""}" data-approver-id="${s.principalId}">
${liftFields(s, `p-${i}`)}</form>`;
  return html`<li class="approval"><article aria-labelledby="p-${i}">
<h2 id="p-${i}">${agentText(q.principalId)}</h2>
<dl class="facts"><dt>Kind</dt><dd>principal quarantine (${q.trigger})</dd>
<dt>Reason</dt><dd>${agentText(q.reason)}</dd>
<dt>Set</dt><dd>${q.setAt ?? "unknown"} in run <code>${agentText(q.runId ?? "")}</code></dd>
<dt>By</dt><dd>${q.ruleId === null ? q.trigger : html`rule <code>${agentText(q.ruleId)}</code>`}${matched.length > 0 ? html`; matched ${agentText(matched.join(", "))}` : ""}</dd></dl>
${form}</article></li>`;
}

function trustItem(st: ConsoleState, s: ConsoleSession, v: QuarantineEntry, i: number): Html {
  const t = v.trust;
  if (t === null) return html``;
  return html`<li class="approval"><article aria-labelledby="q-${i}">
<h2 id="q-${i}">${agentText(v.principalId)}</h2>
<dl class="facts"><dt>Kind</dt><dd>trust quarantine</dd>
<dt>Trust score</dt><dd>${t.score.toFixed(3)}</dd>
<dt>Quarantine</dt><dd>episode ${t.quarantineCount}${t.until === null ? "" : html`, until <time datetime="${t.until}">${t.until}</time>`}</dd>
<dt>Truster</dt><dd>${agentText(t.truster)}</dd></dl>
<form method="post" action="${st.base}/quarantine/lift" class="lift" data-truster="${t.truster}" data-subject="${v.principalId}" data-count="${t.quarantineCount}">
${liftFields(s, `q-${i}`)}</form></article></li>`;
}

/** Every active quarantine (runtime.quarantines, the listing GET /v1/quarantines serves). */
async function quarantined(st: ConsoleState, s: ConsoleSession): Promise<Html> {
  const all = await st.o.runtime.quarantines.list();
  if (all.length === 0) return html`<p class="muted">No agent is quarantined.</p>`;
  return html`<ul class="queue">${all.map((q, i) =>
    q.kind === "trust" ? trustItem(st, s, q, i) : principalItem(st, s, q, i),
  )}</ul>`;
}

export function quarantineRoutes(c: FastifyInstance, st: ConsoleState): void {
  c.get("/quarantine", access, async (req, reply) => {
    const s = sessionOf(st, req);
    requireRole(s, ["approver"]);
    const body = html`<p id="key-status" class="key-status" role="status" data-csrf="${s.csrfToken}" data-approver-id="${s.principalId}" data-signing="${st.o.ring === undefined ? "off" : "required"}">Preparing this browser's signing key…</p>
${await quarantined(st, s)}`;
    return sendHtml(
      reply,
      page({ base: st.base, title: "Quarantine", signedIn: { ...s, pages: st.pages } }, body),
    );
  });

  principalLiftRoute(c, st);
  c.post("/quarantine/lift", access, async (req, reply) => {
    const s = sessionOf(st, req);
    requireRole(s, ["approver"]);
    const form = formOf(req);
    requireCsrf(s, req, form);
    const apae = st.o.runtime.apae;
    const refuse = async (code: string, message: string) => {
      await audit(st.o.runtime.journal, {
        type: QUARANTINE_LIFT_EVENT,
        principalId: s.principalId,
        outcome: "refused",
        code,
      });
      return new WardenError(code as WardenErrorCode, message);
    };
    if (apae === undefined) throw await refuse("ERR_CONSOLE_FORM_INVALID", "APAE trust is off");
    let lift: unknown;
    try {
      lift = parseStrictJson(form.lift ?? "", { maxLength: 16_384, maxDepth: 4 });
    } catch {
      throw await refuse("ERR_CONSOLE_FORM_INVALID", "the lift record is not JSON");
    }
    // Only the signed-in approver's own keys (configured or registered from a browser) count.
    const keyId = (lift as { approver_key_id?: unknown } | null)?.approver_key_id;
    const mine = new Map<string, KeyObject>();
    const key = typeof keyId === "string" ? st.o.ring?.key(s.principalId, keyId) : undefined;
    if (typeof keyId === "string" && key !== undefined) mine.set(keyId, key);
    const r = await apae.lift({ lift, signature: form.signature ?? "" }, { by: s.principalId, keys: mine });
    if (!r.ok) throw await refuse(r.code, r.message);
    const subject = r.subject;
    await audit(st.o.runtime.journal, {
      type: QUARANTINE_LIFT_EVENT,
      principalId: s.principalId,
      outcome: "ok",
      details: { subject, key_id: keyId as string },
    });
    const body = html`<p role="status" class="done">The quarantine of ${agentText(subject)} is lifted${r.principalHeld !== null ? html` in the trust table; the agent stays held by a ${agentText(r.principalHeld)} quarantine` : ""}.</p>
<p><a href="${st.base}/quarantine">Back to quarantines</a></p>`;
    return sendHtml(
      reply,
      page({ base: st.base, title: "Quarantine lifted", signedIn: { ...s, pages: st.pages } }, body),
    );
  });
}
