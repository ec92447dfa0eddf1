// Every console action is journaled (`warden.console.*`): sign-ins (and refused ones),
// sign-outs, approval decisions (and refusals), browser key registrations and each view
// action. The body names who and what, never a token, session id or CSRF token.
import { z } from "zod";
import { defaultEventTypes, type EventTypeRegistry, type Journal } from "../journal/index.js";

export const CONSOLE_EVENTS = {
  signIn: "warden.console.sign_in",
  signInRefused: "warden.console.sign_in_refused",
  signOut: "warden.console.sign_out",
  approval: "warden.console.approval",
  keyRegistered: "warden.console.key_registered",
  keyRevoked: "warden.console.key_revoked",
} as const;

/** The shape every console audit body has; the rest are the action's own details. */
export const ConsoleAuditBody = z.looseObject({
  /** The signed-in principal ("" when nobody was signed in: a refused sign-in). */
  principal_id: z.string().max(128),
  outcome: z.enum(["ok", "refused"]),
  code: z.string().max(64).optional(),
});

const CONSOLE_TYPE = /^warden\.console\.[a-z][a-z0-9_.]{0,62}$/;

/** Registers a console audit event type (idempotent); a name outside `warden.console.*` is a bug. */
export function registerConsoleEvent(type: string, registry: EventTypeRegistry = defaultEventTypes): void {
  if (!CONSOLE_TYPE.test(type)) throw new TypeError(`console audit events are warden.console.*: ${type}`);
  if (!registry.has(type)) registry.register(type, ConsoleAuditBody);
}

export function registerConsoleEventTypes(registry: EventTypeRegistry = defaultEventTypes): void {
  for (const t of Object.values(CONSOLE_EVENTS)) registerConsoleEvent(t, registry);
}

export interface AuditRecord {
  readonly type: string;
  readonly principalId: string;
  readonly outcome: "ok" | "refused";
  readonly code?: string | undefined;
  readonly details?: Readonly<Record<string, unknown>>;
}

/** Appends one audit entry and waits until it is durable (no audit, no action answer). */
export async function audit(journal: Journal, r: AuditRecord): Promise<void> {
  await journal.append({
    type: r.type,
    body: {
      ...(r.details ?? {}),
      principal_id: r.principalId,
      outcome: r.outcome,
      ...(r.code !== undefined ? { code: r.code } : {}),
    },
  });
}
