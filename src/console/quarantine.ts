// The signed early quarantine lift (APAE, docs/trust.md "Early lift") for approvers: the
// agents APAE trust holds in quarantine, and a lift the page signs with the approver's
// registered browser key. The server accepts only the signed-in approver's own keys; the
// runtime checks the record (scope, episode, signature), journals it and ends the quarantine.
import type { KeyObject } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { parseStrictJson, WardenError, type WardenErrorCode } from "../contracts/index.js";
import { audit } from "./audit.js";
import { type ConsoleState, formOf, requireCsrf, requireRole, sendHtml, sessionOf } from "./context.js";
import { agentText, type Html, html } from "./html.js";
import { page } from "./layout.js";
import type { ConsoleSession } from "./sessions.js";

export const QUARANTINE_LIFT_EVENT = "warden.console.quarantine_lift";
const access = { config: { access: "none" as const } };

async function quarantined(st: ConsoleState, s: ConsoleSession): Promise<Html> {
  const apae = st.o.runtime.apae;
  if (apae === undefined)
    return html`<p class="muted">APAE trust is off: there are no trust quarantines.</p>`;
  const rows = (await apae.engine.table()).filter((v) => v.status === "quarantined");
  if (rows.length === 0) return html`<p class="muted">No agent is quarantined.</p>`;
  return html`<ul class="queue">${rows.map(
    (v, i) => html`<li class="approval"><article aria-labelledby="q-${i}">
<h2 id="q-${i}">${agentText(v.subject)}</h2>
<dl class="facts"><dt>Trust score</dt><dd>${v.score.toFixed(3)} (confidence ${v.confidence})</dd>
<dt>Quarantine</dt><dd>episode ${v.quarantineCount}${v.quarantineUntil === null ? "" : html`, until <time datetime="${new Date(v.quarantineUntil).toISOString()}">${new Date(v.quarantineUntil).toISOString()}</time>`}</dd>
<dt>Truster</dt><dd>${agentText(v.truster)}</dd></dl>
<form method="post" action="${st.base}/quarantine/lift" class="lift" data-truster="${v.truster}" data-subject="${v.subject}" data-count="${v.quarantineCount}">
<input type="hidden" name="csrf" value="${s.csrfToken}">
<input type="hidden" name="lift" value="">
<input type="hidden" name="signature" value="">
<label for="q-${i}-why">Reason (required)</label>
<input type="text" id="q-${i}-why" name="reason" required minlength="10" maxlength="1024" autocomplete="off">
<p class="status" role="status"></p>
<button type="submit">Sign and lift the quarantine</button>
</form></article></li>`,
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
