// The one parser of AARTS events: total over any input (never throws), answering either
// the typed event or a coded refusal that the engine turns into its failure policy.
import { parseStrictJson, WardenError } from "../contracts/index.js";
import { HOOK_EVENT_SCHEMAS, HOOK_POINTS, type HookEvent, type HookPoint } from "./schema-points.js";

export type ParseFailureCode = "ERR_HOOK_EVENT_INVALID" | "ERR_HOOK_POINT_UNKNOWN";

export type ParsedEvent =
  | { ok: true; event: HookEvent }
  | { ok: false; code: ParseFailureCode; message: string; hookPoint?: HookPoint };

const KNOWN = new Set<string>(HOOK_POINTS);

export function isHookPoint(v: unknown): v is HookPoint {
  return typeof v === "string" && KNOWN.has(v);
}

function fail(code: ParseFailureCode, message: string, hookPoint?: HookPoint): ParsedEvent {
  return hookPoint === undefined ? { ok: false, code, message } : { ok: false, code, message, hookPoint };
}

/** Parses an already-decoded value as an AARTS event. */
export function parseHookEvent(raw: unknown): ParsedEvent {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return fail("ERR_HOOK_EVENT_INVALID", "an AARTS event is a JSON object");
  }
  const point = (raw as Record<string, unknown>).hook_point;
  if (typeof point !== "string") return fail("ERR_HOOK_EVENT_INVALID", "hook_point is missing");
  if (!isHookPoint(point))
    return fail("ERR_HOOK_POINT_UNKNOWN", `unknown hook point "${point.slice(0, 64)}"`);
  const r = HOOK_EVENT_SCHEMAS[point].safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0];
    const where = issue?.path.join(".") ?? "";
    return fail(
      "ERR_HOOK_EVENT_INVALID",
      `${point}: ${where || "event"}: ${issue?.message ?? "invalid"}`,
      point,
    );
  }
  const event = r.data as HookEvent;
  if (
    "tool_name" in event &&
    event.tool_name === "other" &&
    !("tool_name_native" in event && event.tool_name_native)
  ) {
    return fail("ERR_HOOK_EVENT_INVALID", `${point}: tool_name "other" needs tool_name_native`, point);
  }
  return { ok: true, event };
}

/** Parses one JSON text (strict: duplicate keys and __proto__ refused) as an AARTS event. */
export function parseHookEventText(text: string): ParsedEvent {
  let value: unknown;
  try {
    value = parseStrictJson(text);
  } catch (err) {
    return fail("ERR_HOOK_EVENT_INVALID", err instanceof WardenError ? err.message : "not JSON");
  }
  return parseHookEvent(value);
}
