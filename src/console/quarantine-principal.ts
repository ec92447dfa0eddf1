// POST /console/quarantine/lift-principal (issue 37): an approver lifts a principal
// quarantine (behavioural rule, denial threshold, output screening, manual) with a record of
// scope warden:principal_quarantine_lift the page signed with the approver's registered
// browser key. The runtime checks the record against the signed-in approver's own keys only
// (never another approver's, never an agent's), journals it and ends the quarantine on every
// replica; the console journals who asked and the outcome (`warden.console.quarantine_lift`).
import type { FastifyInstance } from "fastify";
import { parseStrictJson, WardenError, type WardenErrorCode } from "../contracts/index.js";
import { audit } from "./audit.js";
import { type ConsoleState, formOf, requireCsrf, requireRole, sendHtml, sessionOf } from "./context.js";
import { agentText, html } from "./html.js";
import { page } from "./layout.js";

export const QUARANTINE_LIFT_EVENT = "warden.console.quarantine_lift";
const access = { config: { access: "none" as const } };

export function principalLiftRoute(c: FastifyInstance, st: ConsoleState): void {
  c.post("/quarantine/lift-principal", access, async (req, reply) => {
    const s = sessionOf(st, req);
    requireRole(s, ["approver"]);
    const form = formOf(req);
    requireCsrf(s, req, form);
    const refuse = async (code: string, message: string) => {
      await audit(st.o.runtime.journal, {
        type: QUARANTINE_LIFT_EVENT,
        principalId: s.principalId,
        outcome: "refused",
        code,
        details: { kind: "principal" },
      });
      return new WardenError(code as WardenErrorCode, message);
    };
    let lift: unknown;
    try {
      lift = parseStrictJson(form.lift ?? "", { maxLength: 16_384, maxDepth: 4 });
    } catch {
      throw await refuse("ERR_CONSOLE_FORM_INVALID", "the lift record is not JSON");
    }
    const r = await st.o.runtime.quarantines.lift({ lift, signature: form.signature ?? "" }, s.principalId);
    if (!r.ok) throw await refuse(r.code, r.message);
    await audit(st.o.runtime.journal, {
      type: QUARANTINE_LIFT_EVENT,
      principalId: s.principalId,
      outcome: "ok",
      details: {
        kind: "principal",
        subject: r.principalId,
        quarantine_id: r.quarantineId,
        trigger: r.trigger,
      },
    });
    const body = html`<p role="status" class="done">The ${r.trigger} quarantine of ${agentText(r.principalId)} is lifted.</p>
<p><a href="${st.base}/quarantine">Back to quarantines</a></p>`;
    return sendHtml(
      reply,
      page({ base: st.base, title: "Quarantine lifted", signedIn: { ...s, pages: st.pages } }, body),
    );
  });
}
