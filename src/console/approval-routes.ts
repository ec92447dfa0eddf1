// Approvals in the console: the queue page, its fragment (what the live queue reloads), the
// server-sent events that say the queue changed, the decision (approve, deny, modify — signed
// in the browser with the approver's registered key) and the browser key registration.
import type { FastifyInstance } from "fastify";
import { ConsoleError, parseStrictJson, WardenError, type WardenErrorCode } from "../contracts/index.js";
import type { ApprovalRequest, DecideVerdict, DeferredItem } from "../gate/index.js";
import { validateArgs } from "../tools/index.js";
import { approvalLinkRoute } from "./approval-link.js";
import { approvalItem, deferredItem, diffTable } from "./approval-view.js";
import { audit, CONSOLE_EVENTS } from "./audit.js";
import {
  type ConsoleState,
  formOf,
  requireCsrf,
  requireRole,
  sendHtml,
  sessionOf,
  viewContext,
} from "./context.js";
import { type Html, html } from "./html.js";
import { browserPublicKey } from "./keys.js";

const REVOKED_KEY_CODE = "ERR_CONSOLE_KEY_INVALID";

import { page } from "./layout.js";
import { liveQueue } from "./live-queue.js";
import type { ConsoleSession } from "./sessions.js";

const access = { config: { access: "none" as const } };
const OUTCOMES = new Set(["approve", "deny", "modify"]);
const MAX_JUSTIFICATION = 2000;

/** This replica's step-ups and the deferred actions (every replica's in distributed mode). */
async function queueList(st: ConsoleState, s: ConsoleSession): Promise<Html> {
  const c = { runtime: st.o.runtime, base: st.base, csrfToken: s.csrfToken, approverId: s.principalId };
  const items = [
    ...st.o.runtime.approvals.pending().map((p) => approvalItem(p, c)),
    ...(await st.o.runtime.deferredQueue.list()).map((d) => deferredItem(d, c)),
  ];
  return html`<ul id="queue" class="queue" aria-label="Pending approvals">${items}</ul>
<p id="queue-empty" class="muted"${items.length > 0 ? html` hidden` : ""}>No pending approvals.</p>`;
}

/** The verdict a decision form asks for, parsed and checked before the queue sees it. */
function verdictOf(
  st: ConsoleState,
  s: ConsoleSession,
  p: ApprovalRequest,
  form: Readonly<Record<string, string>>,
): DecideVerdict {
  const outcome = form.outcome ?? "";
  if (!OUTCOMES.has(outcome))
    throw new ConsoleError("ERR_CONSOLE_FORM_INVALID", "choose approve, deny or modify");
  const justification = form.justification ?? "";
  if (justification.length > MAX_JUSTIFICATION)
    throw new ConsoleError("ERR_CONSOLE_FORM_INVALID", `justification longer than ${MAX_JUSTIFICATION}`);
  const sig = [form.sig ?? "", form.key_id ?? "", form.time ?? ""];
  const present = sig.filter((x) => x !== "").length;
  if (present !== 0 && present !== 3)
    throw new ConsoleError("ERR_CONSOLE_FORM_INVALID", "a signature needs sig, key_id and time");
  const signed =
    present === 3
      ? {
          signed: {
            decisionId: p.decisionId,
            keyId: sig[1] as string,
            signature: sig[0] as string,
            time: sig[2] as string,
          },
        }
      : {};
  const approver = { id: s.principalId, roles: [...s.credentialRoles] };
  if (outcome !== "modify")
    return { outcome: outcome as "approve" | "deny", approver, justification, ...signed };
  return {
    outcome: "modify",
    approver,
    justification,
    parameters: modifiedParameters(st, p, form),
    ...signed,
  };
}

function modifiedParameters(
  st: ConsoleState,
  p: ApprovalRequest,
  form: Readonly<Record<string, string>>,
): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = parseStrictJson(form.parameters ?? "", { maxLength: 4 * 1024 * 1024, maxDepth: 32 });
  } catch {
    throw new ConsoleError("ERR_CONSOLE_FORM_INVALID", "the modified parameters are not a JSON object");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new ConsoleError("ERR_CONSOLE_FORM_INVALID", "the modified parameters are not a JSON object");
  const tool = p.request.tool === undefined ? undefined : st.o.runtime.contracts?.get(p.request.tool);
  if (tool !== undefined) {
    const v = validateArgs(tool, parsed);
    if (!v.ok)
      throw new ConsoleError("ERR_CONSOLE_FORM_INVALID", `outside the contract: ${v.message}`.slice(0, 300));
  }
  return parsed as Record<string, unknown>;
}

/**
 * Releases or refuses a deferred action (not approver-signed: docs/identity.md), held here or,
 * in distributed mode, on another replica (its holder applies the verdict).
 */
async function releaseDeferred(
  st: ConsoleState,
  s: ConsoleSession,
  d: DeferredItem,
  form: Readonly<Record<string, string>>,
  refuse: (code: string, message: string) => Promise<Error>,
): Promise<Html> {
  const outcome = form.outcome;
  const note = form.justification ?? "";
  if (outcome !== "approve" && outcome !== "deny")
    throw await refuse("ERR_CONSOLE_FORM_INVALID", "a deferred action is released or denied");
  if (note.trim().length < 10 || note.length > MAX_JUSTIFICATION)
    throw await refuse("ERR_CONSOLE_FORM_INVALID", "justification must be 10 to 2000 characters");
  const done = await st.o.runtime.deferredQueue.release(d.id, {
    outcome: outcome === "approve" ? "allow" : "deny",
    releaser: { id: s.principalId, roles: [...s.credentialRoles] },
    note,
  });
  if (!done.ok) throw await refuse(done.code, done.message);
  await audit(st.o.runtime.journal, {
    type: CONSOLE_EVENTS.approval,
    principalId: s.principalId,
    outcome: "ok",
    details: { approval_id: d.id, decision_id: d.decisionId, action: outcome, kind: "defer", signed: false },
  });
  return html`<p role="status" class="done">${outcome === "approve" ? "Released" : "Denied"}: deferred decision <code>${d.decisionId}</code>.</p>
<p><a href="${st.base}/approvals">Back to the queue</a></p>`;
}

const WORD = { approve: "Approved", deny: "Denied", modify: "Modified and approved" } as const;

export function approvalRoutes(c: FastifyInstance, st: ConsoleState): void {
  const { base } = st;
  const queue = liveQueue(st);
  c.addHook("preClose", (done) => {
    queue.close();
    done();
  });

  c.get("/approvals", access, async (req, reply) => {
    const s = sessionOf(st, req);
    requireRole(s, ["approver"]);
    const ctx = viewContext(st, s);
    const body = html`<p id="key-status" class="key-status" role="status" data-csrf="${ctx.csrfToken}" data-approver-id="${s.principalId}" data-signing="${st.o.ring === undefined ? "off" : "required"}">Preparing this browser's signing key…</p>
<p class="live" role="status" aria-live="polite" id="live-status"></p>
${await queueList(st, s)}`;
    return sendHtml(reply, page({ base, title: "Approvals", signedIn: { ...s, pages: st.pages } }, body));
  });

  c.get("/approvals/queue", access, async (req, reply) => {
    const s = sessionOf(st, req);
    requireRole(s, ["approver"]);
    return sendHtml(reply, await queueList(st, s));
  });

  c.get("/approvals/events", access, async (req, reply) => {
    const s = sessionOf(st, req);
    requireRole(s, ["approver"]);
    queue.attach(s, reply);
  });
  decideRoute(c, st);
  keyRoute(c, st);
  approvalLinkRoute(c, st);
}

/** POST /approvals/:id: a step-up verdict (signed in the page) or a deferred release. */
function decideRoute(c: FastifyInstance, st: ConsoleState): void {
  const { base } = st;
  c.post<{ Params: { id: string } }>("/approvals/:id", access, async (req, reply) => {
    const s = sessionOf(st, req);
    requireRole(s, ["approver"]);
    const form = formOf(req);
    requireCsrf(s, req, form);
    const id = req.params.id;
    const p = st.o.runtime.approvals.pending().find((x) => x.id === id);
    const refuse = async (code: string, message: string) => {
      await audit(st.o.runtime.journal, {
        type: CONSOLE_EVENTS.approval,
        principalId: s.principalId,
        outcome: "refused",
        code,
        details: { approval_id: id.slice(0, 128) },
      });
      return new WardenError(code as WardenErrorCode, message);
    };
    if (p === undefined) {
      const d = await st.o.runtime.deferredQueue.find(id);
      if (d === undefined) {
        // First valid answer wins: a later one is told who answered (or that it was never here).
        const r = st.o.runtime.approvals.notPending(id);
        throw await refuse(
          r.ok ? "ERR_APPROVAL_NOT_FOUND" : r.code,
          r.ok ? "no pending approval" : r.message,
        );
      }
      return releaseDeferred(st, s, d, form, refuse).then((body) =>
        sendHtml(
          reply,
          page({ base, title: "Deferred action decided", signedIn: { ...s, pages: st.pages } }, body),
        ),
      );
    }
    let verdict: DecideVerdict;
    try {
      verdict = verdictOf(st, s, p, form);
    } catch (err) {
      if (err instanceof ConsoleError) throw await refuse(err.code, err.message);
      throw err;
    }
    const r = st.o.runtime.approvals.decide(id, verdict);
    if (!r.ok) throw await refuse(r.code, r.message);
    const outcome = verdict.outcome as keyof typeof WORD;
    await audit(st.o.runtime.journal, {
      type: CONSOLE_EVENTS.approval,
      principalId: s.principalId,
      outcome: "ok",
      details: {
        approval_id: id,
        decision_id: p.decisionId,
        action: outcome,
        signed: "signed" in verdict && verdict.signed !== undefined,
      },
    });
    const diff = verdict.outcome === "modify" ? diffTable(p.request.parameters, verdict.parameters) : html``;
    const body = html`<p role="status" class="done">${WORD[outcome]}: decision <code>${p.decisionId}</code>.</p>
${diff}<p><a href="${base}/approvals">Back to the queue</a></p>`;
    return sendHtml(reply, page({ base, title: WORD[outcome], signedIn: { ...s, pages: st.pages } }, body));
  });
}

/** POST /keys: registers this browser's public key for the signed-in approver. */
function keyRoute(c: FastifyInstance, st: ConsoleState): void {
  c.post("/keys", access, async (req, reply) => {
    const s = sessionOf(st, req);
    requireRole(s, ["approver"]);
    const form = formOf(req);
    requireCsrf(s, req, form);
    const ring = st.o.ring;
    if (ring === undefined) throw new ConsoleError("ERR_CONSOLE_KEY_INVALID", "approver signing is off");
    const x = form.x ?? "";
    const known = st.o.keys.list(s.principalId).find((k) => k.x === x);
    if (known?.revokedAt !== undefined)
      throw new ConsoleError(REVOKED_KEY_CODE, "this browser key was revoked");
    if (known !== undefined) return reply.send({ keyId: known.keyId, registered: false });
    if (st.now() - s.signedInAt > st.o.config.freshSignInSeconds * 1000)
      throw new ConsoleError(
        "ERR_CONSOLE_NOT_FRESH",
        "registering a key needs a fresh sign-in: sign in again",
      );
    const added = await st.o.keys.add(s.principalId, x, new Date(st.now()));
    if (!added.ok) throw new ConsoleError(added.code, added.message);
    const pub = browserPublicKey(x);
    if (pub !== undefined) ring.add(s.principalId, pub);
    await audit(st.o.runtime.journal, {
      type: CONSOLE_EVENTS.keyRegistered,
      principalId: s.principalId,
      outcome: "ok",
      details: { key_id: added.key.keyId },
    });
    return reply.send({ keyId: added.key.keyId, registered: true });
  });
}
