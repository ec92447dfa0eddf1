// Every route of the sidecar, one module per resource. ROUTES is the list the OpenAPI
// document is generated from; mountRoutes registers the same declarations.
import type { FastifyInstance } from "fastify";
import type { RouteSpec } from "../route.js";
import {
  APAE_ASSERT,
  APAE_DELEGATE,
  APAE_LIFT,
  APAE_NOTIFY,
  APAE_TRUST,
  APAE_TRUST_ANCHOR,
  apaeRoutes,
} from "./apae.js";
import { APPROVAL_DECIDE, APPROVAL_LIST, approvalRoutes } from "./approvals.js";
import { callRoutes, DECIDE, EXECUTE } from "./calls.js";
import { CAPABILITY_GRANT, capabilityRoutes } from "./capabilities.js";
import type { RouteContext } from "./context.js";
import { HOOK_ROUTES, hookRoutes } from "./hooks.js";
import { JOURNAL_HEAD, JOURNAL_LIST, JOURNAL_VERIFY, journalRoutes } from "./journal.js";
import { MEMORY_ROUTES, memoryRoutes } from "./memory.js";
import { MESSAGE_ROUTES, messageRoutes } from "./messages.js";
import { HEALTH, METRICS, OPENAPI, opsRoutes, READY } from "./ops.js";
import { QUARANTINE_ROUTES, quarantineRoutes } from "./quarantines.js";
import { RUN_CLEAN_CREATE, RUN_CREATE, RUN_STATE, runRoutes } from "./runs.js";

export type { RouteContext } from "./context.js";

export const ROUTES: readonly RouteSpec[] = [
  EXECUTE,
  DECIDE,
  RUN_CREATE,
  RUN_CLEAN_CREATE,
  RUN_STATE,
  CAPABILITY_GRANT,
  APPROVAL_LIST,
  APPROVAL_DECIDE,
  JOURNAL_LIST,
  JOURNAL_HEAD,
  JOURNAL_VERIFY,
  ...MESSAGE_ROUTES,
  HEALTH,
  READY,
  METRICS,
  OPENAPI,
  APAE_NOTIFY,
  APAE_ASSERT,
  APAE_TRUST,
  APAE_TRUST_ANCHOR,
  APAE_DELEGATE,
  APAE_LIFT,
  ...HOOK_ROUTES,
  ...MEMORY_ROUTES,
  ...QUARANTINE_ROUTES,
];

/** Registers each resource's routes as its own encapsulated plugin (root hooks apply to all). */
export function mountRoutes(app: FastifyInstance, ctx: RouteContext): void {
  for (const routes of [
    callRoutes,
    runRoutes,
    capabilityRoutes,
    approvalRoutes,
    journalRoutes,
    messageRoutes,
    opsRoutes,
    apaeRoutes,
    hookRoutes,
    memoryRoutes,
    quarantineRoutes,
  ]) {
    void app.register(async (child) => routes(child, ctx));
  }
}
