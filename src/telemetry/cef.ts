// ArcSight Common Event Format (CEF:0) lines from journal entries, the second export
// format: built from the same OCSF event so the two never disagree. Header fields escape
// `\` and `|`; extension values escape `\`, `=` and line breaks (CEF's own rules).

import type { JournalEntry } from "../journal/index.js";
import { type OcsfEvent, PRODUCT, toOcsf } from "./ocsf.js";

const header = (s: string) =>
  s
    .replace(/\\/g, "\\\\")
    .replace(/\|/g, "\\|")
    .replace(/[\r\n]+/g, " ");
const value = (s: string) =>
  s
    .replace(/\\/g, "\\\\")
    .replace(/=/g, "\\=")
    .replace(/\r\n|\r|\n/g, "\\n");

/** OCSF severity_id (0–6) to CEF severity (0–10). */
const CEF_SEVERITY = [0, 1, 3, 5, 8, 10, 10] as const;

const get = (o: unknown, path: string): unknown => {
  let v: unknown = o;
  for (const k of path.split("."))
    v = v !== null && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined;
  return v;
};

function extensions(ev: OcsfEvent): [string, string | number | undefined][] {
  const w = get(ev, "unmapped.warden");
  const risk = get(w, "risk_score");
  return [
    ["rt", ev.time],
    ["cat", String(ev.class_name ?? "")],
    ["act", String(get(w, "decision") ?? get(ev, "status_code") ?? "")],
    ["outcome", String(ev.status ?? "")],
    ["suser", get(ev, "actor.user.uid") as string | undefined],
    ["dhost", (get(ev, "dst_endpoint.hostname") as string | undefined) ?? undefined],
    ["request", get(ev, "http_request.url.url_string") as string | undefined],
    [
      "externalId",
      (get(ev, "api.request.uid") as string | undefined) ?? (get(ev, "process.uid") as string | undefined),
    ],
    ["msg", String(ev.message ?? "")],
    ["reason", String(get(ev, "status_detail") ?? "")],
    ["cs1Label", "runId"],
    ["cs1", get(ev, "metadata.correlation_uid") as string | undefined],
    ["cs2Label", "traceId"],
    ["cs2", get(w, "trace_id") as string | undefined],
    ["cs3Label", "entryHash"],
    ["cs3", get(w, "entry_hash") as string | undefined],
    ["cn1Label", "riskScoreMilli"],
    ["cn1", typeof risk === "number" ? Math.round(risk * 1000) : undefined],
  ];
}

/** The CEF line of an OCSF event. */
export function cefOf(ev: OcsfEvent, type: string): string {
  const sig = `${type}:${String(get(ev, "unmapped.warden.decision") ?? ev.status_code ?? "event")}`;
  const name = String(ev.type_name ?? type);
  const sev = CEF_SEVERITY[ev.severity_id] ?? 5;
  const ext = extensions(ev)
    .filter((kv): kv is [string, string | number] => kv[1] !== undefined && kv[1] !== "")
    .map(([k, v]) => `${k}=${value(String(v))}`)
    .join(" ");
  return `CEF:0|${header(PRODUCT.vendor_name)}|${header(PRODUCT.name)}|${header(PRODUCT.version)}|${header(sig)}|${header(name)}|${sev}|${ext}`;
}

/** The CEF line of a journal entry, or undefined when its type has no event. */
export function toCef(e: JournalEntry): string | undefined {
  const ev = toOcsf(e);
  return ev === undefined ? undefined : cefOf(ev, e.type);
}
