// A session's JSON-RPC request ids in flight. The SDK's transport routes an answer to the
// stream registered under its request id, so a request sent with an id that is still in
// flight in the session re-routes or orphans the earlier request's answer. JSON-RPC and MCP require
// a requestor's ids to be unique within a session; a duplicate of an id in flight is refused
// before the SDK sees it. What is tracked is bounded by the requests admitted at once.
import type { ServerResponse } from "node:http";

export type IdClaim = { ok: true } | { ok: false; id: string };

/** The ids of the requests in a JSON-RPC body (a message or a batch); responses and notifications have none. */
function requestIds(body: unknown): string[] {
  const out: string[] = [];
  for (const m of Array.isArray(body) ? body : [body]) {
    if (typeof m !== "object" || m === null) continue;
    const r = m as { id?: unknown; method?: unknown };
    if (typeof r.method !== "string" || r.id === undefined || r.id === null) continue;
    out.push(JSON.stringify(r.id));
  }
  return out;
}

/** Claims `body`'s request ids until `res` closes; refuses an id already in flight or repeated in the batch. */
export function claimRequestIds(inFlight: Set<string>, body: unknown, res: ServerResponse): IdClaim {
  const ids = requestIds(body);
  const seen = new Set<string>();
  for (const id of ids) {
    if (inFlight.has(id) || seen.has(id)) return { ok: false, id };
    seen.add(id);
  }
  for (const id of ids) inFlight.add(id);
  res.once("close", () => {
    for (const id of ids) inFlight.delete(id);
  });
  return { ok: true };
}
