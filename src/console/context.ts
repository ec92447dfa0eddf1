// What every console route shares: options, the session table, the refusal statuses, and
// the checks a request passes (session, role, CSRF, same origin).
import type { FastifyReply, FastifyRequest } from "fastify";
import { ConsoleError } from "../contracts/index.js";
import type { ApproverKeyring } from "../journal/index.js";
import type { Runtime } from "../runtime/index.js";
import type { ConsoleConfig } from "./config.js";
import type { ConsoleKeyStore } from "./keys.js";
import type { ConsoleAction, ConsolePage, ConsoleRole, ConsoleViewContext } from "./page.js";
import { sameOrigin, sessionIdFrom } from "./security.js";
import { type ConsoleSession, type ConsoleSessions, sameSecret } from "./sessions.js";

/** An operator credential as the console sees it (the sidecar's Authenticator supplies it). */
export interface ConsoleCredential {
  readonly id: string;
  readonly roles: readonly string[];
}

export interface ConsoleOptions {
  readonly runtime: Runtime;
  readonly config: ConsoleConfig;
  /** Mount point (default `/console`). */
  readonly base?: string;
  /** Whether the sidecar serves TLS (the cookie is then Secure). */
  readonly tls: boolean;
  /** Checks a bearer token; an operator credential or undefined (agents never sign in). */
  readonly signIn: (token: string) => ConsoleCredential | undefined;
  /** Browser keys (registered keys are added to `ring`). */
  readonly keys: ConsoleKeyStore;
  /** The approval queue's keyring; undefined means decisions are not signed (no console keys possible). */
  readonly ring: ApproverKeyring | undefined;
  /** Read-only pages and their actions (src/console/views). */
  readonly pages?: readonly ConsolePage[];
  readonly actions?: readonly ConsoleAction[];
  /** Wall clock for sessions and signature times (tests). */
  readonly now?: () => number;
  /**
   * The HTTP status of a coded error (the entry point's single error table: the sidecar
   * passes its own); an unknown code answers 500.
   */
  readonly statusOf: (code: string) => number | undefined;
}

export interface ConsoleState {
  readonly o: ConsoleOptions;
  readonly base: string;
  readonly sessions: ConsoleSessions;
  readonly now: () => number;
  readonly pages: readonly ConsolePage[];
}

/** The signed-in session of a request, or a coded refusal. */
export function sessionOf(st: ConsoleState, req: FastifyRequest): ConsoleSession {
  const r = st.sessions.touch(sessionIdFrom(req.headers.cookie));
  if (!r.ok) {
    const why = r.reason === "missing" ? "sign in first" : `the session ended (${r.reason}): sign in again`;
    throw new ConsoleError("ERR_CONSOLE_SESSION", why);
  }
  return r.session;
}

export function requireRole(s: ConsoleSession, roles: readonly ConsoleRole[]): void {
  if (!roles.some((r) => s.roles.includes(r)))
    throw new ConsoleError("ERR_CONSOLE_FORBIDDEN", `this needs the ${roles.join(" or ")} role`);
}

/** A state change: same origin, and the session's CSRF token in the form or the header. */
export function requireCsrf(
  s: ConsoleSession,
  req: FastifyRequest,
  form: Readonly<Record<string, string>>,
): void {
  if (!sameOrigin(req.headers)) throw new ConsoleError("ERR_CONSOLE_CSRF", "cross-origin request refused");
  const header = req.headers["x-csrf-token"];
  const given = form.csrf ?? (typeof header === "string" ? header : undefined);
  if (given === undefined || given === "")
    throw new ConsoleError("ERR_CONSOLE_CSRF", "the CSRF token is missing");
  if (!sameSecret(s.csrfToken, given)) throw new ConsoleError("ERR_CONSOLE_CSRF", "the CSRF token is wrong");
}

export function viewContext(st: ConsoleState, s: ConsoleSession): ConsoleViewContext {
  return {
    runtime: st.o.runtime,
    principalId: s.principalId,
    roles: s.roles,
    csrfToken: s.csrfToken,
    base: st.base,
  };
}

/** The parsed form of a POST (the console's urlencoded parser), never undefined. */
export function formOf(req: FastifyRequest): Record<string, string> {
  const b = req.body;
  if (b === undefined || b === null) return {};
  if (typeof b !== "object" || Array.isArray(b))
    throw new ConsoleError("ERR_CONSOLE_FORM_INVALID", "the body must be a form");
  for (const v of Object.values(b))
    if (typeof v !== "string") throw new ConsoleError("ERR_CONSOLE_FORM_INVALID", "the body must be a form");
  return b as Record<string, string>;
}

export function sendHtml(reply: FastifyReply, body: { value: string }, status = 200): FastifyReply {
  return reply.code(status).type("text/html; charset=utf-8").send(body.value);
}
