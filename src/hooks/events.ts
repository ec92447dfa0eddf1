// The journal entries the engine writes: one per version check, one per verdict (with the
// sha256 of the event it answers, so an auditor can tie the verdict to the exact event the
// host sent). The journal masks credentials in every body string before sealing.
import { z } from "zod";
import type { EventTypeRegistry } from "../journal/index.js";

export const HOOK_VERDICT_EVENT = "warden.hooks.verdict";
export const HOOK_HANDSHAKE_EVENT = "warden.hooks.handshake";
/** A human cleared a session's taint and poison (`warden hooks clear`). */
export const HOOK_CLEAR_EVENT = "warden.hooks.clear";

const Short = z.string().max(256);

export const HookVerdictBodySchema = z.strictObject({
  hook_point: Short,
  session_id: Short.nullable(),
  host_id: Short.nullable(),
  event_hash: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  decision: z.enum(["allow", "deny", "ask"]),
  category: Short,
  severity: z.enum(["info", "warning", "critical"]),
  source: Short,
  matched_rule_id: Short.nullable(),
  reasons: z.array(z.string().max(4096)).max(64),
  artifacts: z.array(z.string().max(4096)).max(64),
  directives: z.array(Short).max(16),
  /** Set when the verdict came from the failure policy (§9.1), not an evaluation. */
  failure: z.strictObject({ code: Short, mode: z.enum(["fail-closed", "fail-open"]) }).nullable(),
});

export const HookHandshakeBodySchema = z.strictObject({
  aarts_version: Short,
  compatible: z.boolean(),
  engine_id: Short,
  transport: Short,
});

export const HookClearBodySchema = z.strictObject({
  session_id: Short,
  /** Who cleared it: the operating-system account that ran the command, and what it said. */
  by: z.strictObject({ user: Short, uid: z.number().int(), note: z.string().max(1024).nullable() }),
  at: Short,
  taint: z.array(z.string().max(1024)).max(64),
  poisoned: z.array(z.string().max(256)).max(64),
  epoch: z.number().int().nonnegative(),
});

export function registerHookEventTypes(registry: Pick<EventTypeRegistry, "has" | "register">): void {
  if (!registry.has(HOOK_VERDICT_EVENT)) registry.register(HOOK_VERDICT_EVENT, HookVerdictBodySchema);
  if (!registry.has(HOOK_HANDSHAKE_EVENT)) registry.register(HOOK_HANDSHAKE_EVENT, HookHandshakeBodySchema);
  if (!registry.has(HOOK_CLEAR_EVENT)) registry.register(HOOK_CLEAR_EVENT, HookClearBodySchema);
}
