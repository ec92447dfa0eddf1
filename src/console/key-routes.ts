// An approver's browser keys (issue 37): GET /keys lists the signed-in approver's registered
// keys (live and revoked); POST /keys/revoke revokes one of them — a lost or compromised
// browser — persisted first (in distributed mode in the shared store, so every replica stops
// accepting it: shared-keys.ts), dropped from this replica's keyring at once, journaled
// (`warden.console.key_revoked`). Only the approver's own keys; a revoked key is never
// registered again.
import type { FastifyInstance } from "fastify";
import { ConsoleError } from "../contracts/index.js";
import { audit, CONSOLE_EVENTS } from "./audit.js";
import { type ConsoleState, formOf, requireCsrf, requireRole, sendHtml, sessionOf } from "./context.js";
import { html } from "./html.js";
import { page } from "./layout.js";

const access = { config: { access: "none" as const } };

export function keyRoutes(c: FastifyInstance, st: ConsoleState): void {
  c.get("/keys", access, async (req, reply) => {
    const s = sessionOf(st, req);
    requireRole(s, ["approver"]);
    const keys = st.o.keys.list(s.principalId);
    const rows = keys.map(
      (k) =>
        html`<li><code>${k.keyId}</code> registered ${k.registeredAt}${
          k.revokedAt !== undefined
            ? html`, <strong>revoked</strong> ${k.revokedAt}`
            : html`<form method="post" action="${st.base}/keys/revoke" class="revoke">
<input type="hidden" name="csrf" value="${s.csrfToken}">
<input type="hidden" name="key_id" value="${k.keyId}">
<button type="submit">Revoke key ${k.keyId.slice(0, 8)}</button>
</form>`
        }</li>`,
    );
    const body =
      keys.length === 0
        ? html`<p class="muted">No browser key is registered for you.</p>`
        : html`<ul class="keys">${rows}</ul>`;
    return sendHtml(
      reply,
      page({ base: st.base, title: "Browser keys", signedIn: { ...s, pages: st.pages } }, body),
    );
  });

  c.post("/keys/revoke", access, async (req, reply) => {
    const s = sessionOf(st, req);
    requireRole(s, ["approver"]);
    const form = formOf(req);
    requireCsrf(s, req, form);
    const keyId = form.key_id ?? "";
    const r = await st.o.keys.revoke(s.principalId, keyId, new Date(st.now()), st.o.ring);
    await audit(st.o.runtime.journal, {
      type: CONSOLE_EVENTS.keyRevoked,
      principalId: s.principalId,
      outcome: r.ok ? "ok" : "refused",
      ...(r.ok ? {} : { code: r.code }),
      details: { key_id: keyId.slice(0, 64) },
    });
    if (!r.ok) throw new ConsoleError(r.code, r.message);
    const body = html`<p role="status" class="done">Key <code>${keyId}</code> is revoked: it signs nothing on any replica.</p>
<p><a href="${st.base}/keys">Back to your keys</a></p>`;
    return sendHtml(
      reply,
      page({ base: st.base, title: "Key revoked", signedIn: { ...s, pages: st.pages } }, body),
    );
  });
}
