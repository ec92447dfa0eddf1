// GET /console/a/:token — the one-time approval link a notification carries
// (docs/console.md#approvals-anywhere). The token names one approval (a step-up or a
// deferred action); the page shows that one item with the same signed decision form as the queue (the approver's sign-in and
// browser key are still required; the link grants nothing by itself). An item already
// answered says who answered first; an unknown, malformed or expired token is refused
// (ERR_CONSOLE_LINK_INVALID), as is any use without a session (sign in, then the item is
// in the queue). A refused use is audited (decisions are, by the decide route). The list is
// not the live queue (`#queue`): it keeps
// showing this one item.
import type { FastifyInstance } from "fastify";
import { ConsoleError } from "../contracts/index.js";
import { approvalItem, deferredItem } from "./approval-view.js";
import { audit, CONSOLE_EVENTS } from "./audit.js";
import { type ConsoleState, requireRole, sendHtml, sessionOf, viewContext } from "./context.js";
import { html } from "./html.js";
import { page } from "./layout.js";

const access = { config: { access: "none" as const } };

export function approvalLinkRoute(c: FastifyInstance, st: ConsoleState): void {
  const { base } = st;
  c.get<{ Params: { token: string } }>("/a/:token", access, async (req, reply) => {
    const s = sessionOf(st, req);
    requireRole(s, ["approver"]);
    const target = st.o.runtime.notifications?.links.resolve(req.params.token);
    if (target === undefined) {
      await audit(st.o.runtime.journal, {
        type: CONSOLE_EVENTS.approval,
        principalId: s.principalId,
        outcome: "refused",
        code: "ERR_CONSOLE_LINK_INVALID",
        details: { via: "link" },
      });
      throw new ConsoleError("ERR_CONSOLE_LINK_INVALID", "this approval link is unknown or has expired");
    }
    const p = st.o.runtime.approvals.pending().find((x) => x.id === target.approvalId);
    const signedIn = { ...s, pages: st.pages };
    const c2 = { runtime: st.o.runtime, base, csrfToken: s.csrfToken, approverId: s.principalId };
    const d = p === undefined ? await st.o.runtime.deferredQueue.find(target.approvalId) : undefined;
    if (d !== undefined)
      return sendHtml(
        reply,
        page(
          { base, title: "Deferred action", signedIn },
          html`<ul id="approval-single" class="queue" aria-label="Deferred action">${deferredItem(d, c2)}</ul>`,
        ),
      );
    if (p === undefined) {
      const r = st.o.runtime.approvals.notPending(target.approvalId);
      const said = r.ok ? "This approval is no longer pending." : r.message;
      return sendHtml(
        reply,
        page(
          { base, title: "Already decided", signedIn },
          html`<p role="status" class="done">Decision <code>${target.decisionId}</code>: ${said}</p>
<p><a href="${base}/approvals">The approval queue</a></p>`,
        ),
      );
    }
    const ctx = viewContext(st, s);
    const body = html`<p id="key-status" class="key-status" role="status" data-csrf="${ctx.csrfToken}" data-approver-id="${s.principalId}" data-signing="${st.o.ring === undefined ? "off" : "required"}">Preparing this browser's signing key…</p>
<ul id="approval-single" class="queue" aria-label="Pending approval">${approvalItem(p, c2)}</ul>`;
    return sendHtml(reply, page({ base, title: "Approval", signedIn }, body));
  });
}
