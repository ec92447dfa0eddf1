// What a console page is. The console plugin (sign-in, sessions, CSRF, CSP, routing)
// mounts pages and actions from these declarations; a page renders escaped markup only
// (`Html`, html.ts) and never sees the session cookie or the CSRF secret itself.
import type { Runtime } from "../runtime/index.js";
import type { Html } from "./html.js";

/** The console's roles: approvers decide step-ups, auditors read runs and the journal. */
export type ConsoleRole = "approver" | "auditor";

export interface ConsoleViewContext {
  readonly runtime: Runtime;
  /** The signed-in principal (an approver id or the auditor credential's name). */
  readonly principalId: string;
  readonly roles: readonly ConsoleRole[];
  /** To put in a hidden `csrf` field of every form that changes state. */
  readonly csrfToken: string;
  /** The console's base path (default `/console`), for links. */
  readonly base: string;
}

/** A GET page: `path` is relative to the base (`/runs`, `/runs/:id`). */
export interface ConsolePage {
  readonly path: string;
  readonly title: string;
  readonly roles: readonly ConsoleRole[];
  render(ctx: ConsoleViewContext, input: ConsolePageInput): Promise<Html>;
}

export interface ConsolePageInput {
  readonly params: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
}

/**
 * A POST action (form submission). The plugin checks the session, the role and the CSRF
 * token before `handle` runs and journals the action; `body` is the parsed form.
 */
export interface ConsoleAction {
  readonly path: string;
  readonly roles: readonly ConsoleRole[];
  /** Journal event name for the audit record of this action (`warden.console.*`). */
  readonly audit: string;
  handle(ctx: ConsoleViewContext, body: Readonly<Record<string, string>>): Promise<ConsoleActionResult>;
}

export type ConsoleActionResult =
  | { readonly kind: "page"; readonly html: Html; readonly audit: Readonly<Record<string, unknown>> }
  | {
      readonly kind: "download";
      readonly filename: string;
      readonly mediaType: string;
      readonly body: string;
      readonly audit: Readonly<Record<string, unknown>>;
    };
