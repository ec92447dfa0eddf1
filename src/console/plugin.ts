// The console as a fastify plugin, mounted by the sidecar under `/console` when the
// configuration's `console.enabled` is true (docs/console.md). Its routes declare access
// "none" to the sidecar's bearer-token auth and do their own: a server-side session from
// a sign-in with an approver or auditor credential, the role each page or action needs,
// and on every POST the same origin and the session's CSRF token. Every answer carries
// the strict CSP and the framing/sniffing/referrer headers (security.ts).
import { readFileSync } from "node:fs";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ConsoleError, WardenError } from "../contracts/index.js";
import { approvalRoutes } from "./approval-routes.js";
import { audit, CONSOLE_EVENTS, registerConsoleEvent, registerConsoleEventTypes } from "./audit.js";
import {
  type ConsoleOptions,
  type ConsoleState,
  formOf,
  requireCsrf,
  sendHtml,
  sessionOf,
} from "./context.js";
import { html } from "./html.js";
import { keyRoutes } from "./key-routes.js";
import { errorPage, hasRole, page } from "./layout.js";
import { QUARANTINE_LIFT_EVENT, quarantineRoutes } from "./quarantine.js";
import {
  MAX_FORM_BYTES,
  parseForm,
  SECURITY_HEADERS,
  sameOrigin,
  sessionCookie,
  sessionIdFrom,
} from "./security.js";
import { ConsoleSessions } from "./sessions.js";
import { type Admission, SignInLimits } from "./sign-in-limits.js";
import { mountViews } from "./view-routes.js";
import { VIEWS_CSS } from "./views/index.js";

const STATIC: Record<string, string> = { "console.js": "text/javascript", "console.css": "text/css" };

/** The client files, read once: beside this module (source) or under src/ (from dist/). */
function loadStatic(): Map<string, { type: string; body: string }> {
  const out = new Map<string, { type: string; body: string }>();
  for (const [name, type] of Object.entries(STATIC)) {
    const candidates = [
      new URL(`./static/${name}`, import.meta.url),
      new URL(`../../../src/console/static/${name}`, import.meta.url),
    ];
    let body: string | undefined;
    for (const c of candidates) {
      try {
        body = readFileSync(c, "utf8");
        break;
      } catch {}
    }
    if (body === undefined)
      throw new ConsoleError("ERR_CONSOLE_CONFIG_INVALID", `console client file ${name} is missing`);
    // The audit views' classes (src/console/views) are served in the same style sheet.
    if (name === "console.css") body += `\n${VIEWS_CSS}`;
    out.set(name, { type: `${type}; charset=utf-8`, body });
  }
  return out;
}

function refusal(
  err: unknown,
  statusOf: ConsoleOptions["statusOf"],
): { status: number; code: string; message: string } {
  if (err instanceof WardenError) {
    const status = statusOf(err.code);
    if (status !== undefined && status < 500) return { status, code: err.code, message: err.message };
    if (status !== undefined) return { status, code: err.code, message: "the console could not answer" };
  }
  const e = err as FastifyError;
  if (e?.code === "FST_ERR_CTP_BODY_TOO_LARGE")
    return { status: 413, code: "ERR_CONSOLE_FORM_INVALID", message: "form too large" };
  if (e?.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE")
    return { status: 415, code: "ERR_CONSOLE_FORM_INVALID", message: "forms only" };
  if (typeof e?.statusCode === "number" && e.statusCode < 500)
    return { status: 400, code: "ERR_CONSOLE_FORM_INVALID", message: "the request could not be processed" };
  return { status: 500, code: "ERR_SERVER_INTERNAL", message: "internal error" };
}

function wantsJson(req: FastifyRequest): boolean {
  return (req.headers.accept ?? "").includes("application/json");
}

/** Registers the console under its base path. */
export function consolePlugin(app: FastifyInstance, o: ConsoleOptions): void {
  registerConsoleEventTypes();
  registerConsoleEvent(QUARANTINE_LIFT_EVENT);
  const base = o.base ?? "/console";
  const now = o.now ?? Date.now;
  const files = loadStatic();
  const st: ConsoleState = {
    o,
    base,
    now,
    sessions: new ConsoleSessions(o.config, now),
    pages: o.pages ?? [],
  };
  void app.register(
    async (c) => {
      c.addContentTypeParser(
        "application/x-www-form-urlencoded",
        { parseAs: "string", bodyLimit: MAX_FORM_BYTES },
        (_req, body, done) => {
          try {
            done(null, parseForm(body as string));
          } catch (err) {
            done(err as Error, undefined);
          }
        },
      );
      c.addHook("onSend", (_req, reply, payload, done) => {
        void reply.headers(SECURITY_HEADERS);
        done(null, payload);
      });
      c.setErrorHandler((err, req, reply) => {
        const r = refusal(err, o.statusOf);
        if (r.code === "ERR_SERVER_INTERNAL") c.log.error(err);
        if (wantsJson(req)) return reply.code(r.status).send({ error: { code: r.code, message: r.message } });
        return sendHtml(reply, errorPage(base, r.code, r.message), r.status);
      });
      c.setNotFoundHandler((_req, reply) =>
        sendHtml(reply, errorPage(base, "ERR_SERVER_NOT_FOUND", "no such console page"), 404),
      );
      for (const [name, f] of files)
        c.get(`/static/${name}`, { config: { access: "none" } }, async (_req, reply) =>
          reply.type(f.type).send(f.body),
        );
      signInRoutes(c, st);
      approvalRoutes(c, st);
      quarantineRoutes(c, st);
      keyRoutes(c, st);
      mountViews(c, st, o.pages ?? [], o.actions ?? []);
    },
    { prefix: base },
  );
}

function home(st: ConsoleState): (req: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> {
  return async (req, reply) => {
    const r = st.sessions.touch(sessionIdFrom(req.headers.cookie));
    if (!r.ok) return reply.redirect(`${st.base}/sign-in`, 303);
    const s = r.session;
    const links = [
      ...(s.roles.includes("approver") ? [html`<li><a href="${st.base}/approvals">Approvals</a></li>`] : []),
      ...st.pages
        .filter((p) => hasRole(s.roles, p.roles) && !p.path.includes(":"))
        .map((p) => html`<li><a href="${st.base}${p.path}">${p.title}</a></li>`),
    ];
    return sendHtml(
      reply,
      page(
        { base: st.base, title: "Console", signedIn: { ...s, pages: st.pages } },
        html`<ul class="home">${links}</ul>`,
      ),
    );
  };
}

const signInForm = (base: string, message?: string) =>
  page(
    { base, title: "Sign in" },
    html`${message === undefined ? "" : html`<p role="alert" class="error">${message}</p>`}
<form method="post" action="${base}/sign-in" class="sign-in">
<label for="token">Approver or auditor token</label>
<input id="token" name="token" type="password" autocomplete="off" required maxlength="512">
<button type="submit">Sign in</button>
</form>`,
  );

function limited(a: Admission): void {
  if (!a.ok)
    throw new ConsoleError(
      "ERR_CONSOLE_SIGN_IN_LIMITED",
      `too many sign-in attempts: try again in ${a.retryAfterSeconds} s`,
      { details: { retryAfterSeconds: a.retryAfterSeconds } },
    );
}

function signInRoutes(c: FastifyInstance, st: ConsoleState): void {
  const { base } = st;
  const limits = new SignInLimits(st.o.config.signInPerMinute);
  const access = { config: { access: "none" as const } };
  c.get("/", access, home(st));
  c.get("/sign-in", access, async (_req, reply) => sendHtml(reply, signInForm(base)));
  c.post("/sign-in", access, async (req, reply) => {
    limited(limits.admitAddress(req.ip));
    const form = formOf(req);
    if (!sameOrigin(req.headers)) throw new ConsoleError("ERR_CONSOLE_CSRF", "cross-origin sign-in refused");
    const who =
      typeof form.token === "string" && form.token.length <= 512 ? st.o.signIn(form.token) : undefined;
    const roles = who?.roles.filter((r) => r === "approver" || r === "auditor") ?? [];
    if (who === undefined || roles.length === 0) {
      limits.refused(req.ip);
      if (limits.journalRefusal())
        await audit(st.o.runtime.journal, {
          type: CONSOLE_EVENTS.signInRefused,
          principalId: who?.id ?? "",
          outcome: "refused",
          code: "ERR_CONSOLE_SIGN_IN_INVALID",
        });
      return sendHtml(reply, signInForm(base, "That token is not an approver or auditor credential."), 401);
    }
    limited(limits.admitAccount(req.ip, who.id));
    const old = sessionIdFrom(req.headers.cookie);
    if (old !== undefined) st.sessions.end(old);
    const s = st.sessions.create(who.id, who.roles);
    await audit(st.o.runtime.journal, {
      type: CONSOLE_EVENTS.signIn,
      principalId: who.id,
      outcome: "ok",
      details: { roles: [...s.roles] },
    });
    const maxAge = Math.min(st.o.config.maxSessionSeconds, 86_400 * 7);
    void reply.header("set-cookie", sessionCookie(s.id, { base, tls: st.o.tls, maxAge }));
    return reply.redirect(s.roles.includes("approver") ? `${base}/approvals` : `${base}/`, 303);
  });
  c.post("/sign-out", access, async (req, reply) => {
    const s = sessionOf(st, req);
    requireCsrf(s, req, formOf(req));
    st.sessions.end(s.id);
    await audit(st.o.runtime.journal, {
      type: CONSOLE_EVENTS.signOut,
      principalId: s.principalId,
      outcome: "ok",
    });
    void reply.header("set-cookie", sessionCookie("", { base, tls: st.o.tls, maxAge: 0 }));
    return reply.redirect(`${base}/sign-in`, 303);
  });
}
