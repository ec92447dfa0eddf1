// Mounts the read-only pages and their actions (src/console/views) generically: a page
// needs a live session and one of its roles; an action also needs the same origin and the
// session's CSRF token, and is journaled under its own `warden.console.*` event (refused
// ones too) before its answer is sent.
import type { FastifyInstance } from "fastify";
import { ConsoleError } from "../contracts/index.js";
import { audit, registerConsoleEvent } from "./audit.js";
import {
  type ConsoleState,
  formOf,
  requireCsrf,
  requireRole,
  sendHtml,
  sessionOf,
  viewContext,
} from "./context.js";
import { page } from "./layout.js";
import type { ConsoleAction, ConsolePage } from "./page.js";
import { sessionIdFrom } from "./security.js";

const access = { config: { access: "none" as const } };

function strings(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof v !== "object" || v === null) return out;
  for (const [k, x] of Object.entries(v)) if (typeof x === "string") out[k] = x;
  return out;
}

/** A download's file name: letters, digits, dot, dash, underscore only. */
export function safeFilename(name: string): string {
  const s = name.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 100);
  return s === "" || s.startsWith(".") ? `export${s}` : s;
}

function mountPage(c: FastifyInstance, st: ConsoleState, p: ConsolePage): void {
  c.get(p.path, access, async (req, reply) => {
    if (!st.sessions.alive(sessionIdFrom(req.headers.cookie) ?? ""))
      return reply.redirect(`${st.base}/sign-in`, 303);
    const s = sessionOf(st, req);
    requireRole(s, p.roles);
    const body = await p.render(viewContext(st, s), {
      params: strings(req.params),
      query: strings(req.query),
    });
    return sendHtml(
      reply,
      page({ base: st.base, title: p.title, signedIn: { ...s, pages: st.pages } }, body),
    );
  });
}

function mountAction(c: FastifyInstance, st: ConsoleState, a: ConsoleAction): void {
  registerConsoleEvent(a.audit);
  c.post(a.path, access, async (req, reply) => {
    const s = sessionOf(st, req);
    const form = formOf(req);
    try {
      requireRole(s, a.roles);
      requireCsrf(s, req, form);
    } catch (err) {
      const code = err instanceof ConsoleError ? err.code : "ERR_CONSOLE_FORBIDDEN";
      await audit(st.o.runtime.journal, {
        type: a.audit,
        principalId: s.principalId,
        outcome: "refused",
        code,
      });
      throw err;
    }
    const { csrf: _csrf, ...fields } = form;
    const r = await a.handle(viewContext(st, s), fields);
    await audit(st.o.runtime.journal, {
      type: a.audit,
      principalId: s.principalId,
      outcome: "ok",
      details: r.audit,
    });
    if (r.kind === "download")
      return reply
        .type(r.mediaType)
        .header("content-disposition", `attachment; filename="${safeFilename(r.filename)}"`)
        .send(r.body);
    return sendHtml(
      reply,
      page({ base: st.base, title: "Result", signedIn: { ...s, pages: st.pages } }, r.html),
    );
  });
}

/** Mounts every page and action; a path the console itself serves is a programming error. */
export function mountViews(
  c: FastifyInstance,
  st: ConsoleState,
  pages: readonly ConsolePage[],
  actions: readonly ConsoleAction[],
): void {
  const own = new Set([
    "/",
    "/sign-in",
    "/sign-out",
    "/approvals",
    "/approvals/queue",
    "/approvals/events",
    "/keys",
    "/keys/revoke",
  ]);
  for (const p of pages) {
    if (own.has(p.path) || p.path.startsWith("/static/"))
      throw new TypeError(`console page ${p.path} is reserved`);
    mountPage(c, st, p);
  }
  for (const a of actions) {
    if (own.has(a.path) || a.path.startsWith("/approvals/"))
      throw new TypeError(`console action ${a.path} is reserved`);
    mountAction(c, st, a);
  }
}
