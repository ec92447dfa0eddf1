// OCSF 1.3.0 events from journal entries (OATS E6). A Gate decision is an API Activity
// (6003) whose actor carries the authorization (decision + policy); an execution is a
// Process Activity (1007, Launch) when the executor ran a process, else an API Activity.
// Everything OCSF has no attribute for stays under `unmapped.warden`. Entries of other
// types have no OCSF event. The mapping table is in docs/telemetry.md#ocsf-mapping.

import type { JournalEntry } from "../journal/index.js";

export const OCSF_VERSION = "1.3.0";
export const PRODUCT = { name: "Warden", vendor_name: "Warden", version: "0.1.0" } as const;

export type OcsfEvent = Record<string, unknown> & {
  class_uid: number;
  activity_id: number;
  type_uid: number;
  severity_id: number;
  time: number;
};

const SEVERITY = ["Unknown", "Informational", "Low", "Medium", "High", "Critical"] as const;
const API_ACTIVITY = { 1: "Create", 2: "Read", 3: "Update", 4: "Delete", 99: "Other" } as const;
type ApiActivity = keyof typeof API_ACTIVITY;

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === "number" ? v : undefined);
const obj = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** The OCSF API activity of a tool class / action. */
export function apiActivity(action: string): ApiActivity {
  if (/^(get|head|read|list|query|search|fetch|retrieve|lookup|stat|describe|options)$/.test(action))
    return 2;
  if (/^(post|create|write|insert|put|send|upload|exec|run|spawn)$/.test(action)) return 1;
  if (/^(patch|update|modify|set|rename|move)$/.test(action)) return 3;
  if (/^(delete|remove|rm|drop|unlink)$/.test(action)) return 4;
  return 99;
}

function base(
  e: JournalEntry,
  cls: { uid: number; name: string; cat: number; catName: string },
  act: { id: number; name: string },
) {
  return {
    category_uid: cls.cat,
    category_name: cls.catName,
    class_uid: cls.uid,
    class_name: cls.name,
    activity_id: act.id,
    activity_name: act.name,
    type_uid: cls.uid * 100 + act.id,
    type_name: `${cls.name}: ${act.name}`,
    time: Date.parse(e.time),
    timezone_offset: 0,
    metadata: {
      version: OCSF_VERSION,
      product: { ...PRODUCT },
      log_name: e.type,
      log_provider: "warden-journal",
      original_time: e.time,
      sequence: e.seq,
      ...(e.run_id !== null ? { correlation_uid: e.run_id } : {}),
    },
  };
}

function severity(id: number) {
  return { severity_id: id, severity: SEVERITY[id] ?? "Unknown" };
}

/** Decision → severity: allow informational, modify and holds low, deny medium; risk ≥ 0.7 high, ≥ 0.9 critical. */
function decisionSeverity(decision: string, risk: number | undefined): number {
  const byDecision = decision === "allow" ? 1 : decision === "deny" ? 3 : 2;
  const byRisk = risk === undefined ? 0 : risk >= 0.9 ? 5 : risk >= 0.7 ? 4 : 0;
  return Math.max(byDecision, byRisk);
}

function status(ok: boolean | undefined, code: string, detail: string) {
  const id = ok === undefined ? 99 : ok ? 1 : 2;
  return {
    status_id: id,
    status: id === 1 ? "Success" : id === 2 ? "Failure" : "Other",
    status_code: code,
    status_detail: detail,
  };
}

function actorOf(principal: string, authorization?: Record<string, unknown>) {
  return {
    user: { uid: principal, name: principal, type_id: 99, type: "Other" },
    app_name: "warden",
    ...(authorization !== undefined ? { authorizations: [authorization] } : {}),
  };
}

function hostOf(params: Record<string, unknown>): string | undefined {
  const url = str(params.url);
  if (url === undefined) return undefined;
  try {
    return new URL(url).hostname || undefined;
  } catch {
    return undefined;
  }
}

/** A `warden.gate.decision` entry as an OCSF API Activity. */
export function decisionEvent(e: JournalEntry): OcsfEvent {
  const b = e.body;
  const decision = str(b.decision) ?? "deny";
  const toolClass = str(b.tool_class) ?? "unknown";
  const action = str(b.action) ?? "unknown";
  const tool = str(b.tool) ?? `${toolClass}.${action}`;
  const principal = str(b.principal_id) ?? "unknown";
  const reasons = Array.isArray(b.reason_codes) ? (b.reason_codes as string[]) : [];
  const rules = Array.isArray(b.matched_rules) ? (b.matched_rules as { id: string }[]) : [];
  const dare = obj(b.dare);
  // The hashes and risk score are in the DARE record (earlier entries also carried them outside).
  const risk = num(obj(dare.inputs).orm_risk_score) ?? num(b.risk_score);
  const params = obj(b.parameters);
  const host = hostOf(params);
  const act = apiActivity(action);
  const granted = decision === "allow" || decision === "modify";
  const head = base(
    e,
    { uid: 6003, name: "API Activity", cat: 6, catName: "Application Activity" },
    { id: act, name: API_ACTIVITY[act] },
  );
  const tenant = str(dare.tenant_id);
  if (tenant !== undefined) (head.metadata as Record<string, unknown>).tenant_uid = tenant;
  return {
    ...head,
    ...severity(decisionSeverity(decision, risk)),
    ...status(
      decision === "step_up" || decision === "defer" ? undefined : granted,
      decision,
      reasons.join(","),
    ),
    message: `${decision} ${tool} for ${principal}${reasons.length > 0 ? ` (${reasons.join(", ")})` : ""}`,
    actor: actorOf(principal, {
      decision,
      policy: {
        uid: str(obj(dare.bundles).policy_bundle_hash) ?? str(b.policy_bundle_hash) ?? "unknown",
        name: rules[0]?.id ?? "none",
        is_applied: true,
      },
    }),
    api: {
      operation: `${toolClass}.${action}`,
      service: { name: tool },
      request: { uid: str(b.decision_id) ?? "unknown" },
    },
    src_endpoint: { uid: principal, name: principal },
    dst_endpoint: host !== undefined ? { hostname: host, svc_name: tool } : { name: tool, svc_name: tool },
    resources: [{ name: tool, type: "tool", uid: `${toolClass}.${action}` }],
    ...(host !== undefined ? { http_request: { url: { url_string: str(params.url), hostname: host } } } : {}),
    observables: [{ name: "actor.user.uid", type_id: 4, type: "User Name", value: principal }],
    unmapped: {
      warden: {
        decision,
        reason_codes: reasons,
        ...(risk !== undefined ? { risk_score: risk } : {}),
        ...(b.drift !== undefined ? { drift: b.drift } : {}),
        ...(e.trace_id !== null ? { trace_id: e.trace_id } : {}),
        entry_hash: e.hash,
      },
    },
  };
}

/** A `warden.executor.evidence` entry: Process Activity for a process, API Activity otherwise. */
export function executionEvent(e: JournalEntry): OcsfEvent {
  const b = e.body;
  const t = obj(b.tool);
  const inv = obj(b.invocation);
  const exit = obj(b.exit);
  const principal = str(obj(b.identity).principal_id) ?? "unknown";
  const tool = str(t.name) ?? "unknown";
  const st = str(b.status) ?? "error";
  const ok = st === "success";
  const common = {
    ...severity(ok ? 1 : 3),
    ...status(ok, st, str(b.error_code) ?? st),
    message: `executed ${tool} for ${principal}: ${st}`,
    actor: actorOf(principal),
    duration: num(b.duration_ms) ?? 0,
    start_time: Date.parse(str(b.started_at) ?? e.time),
    unmapped: {
      warden: {
        evidence_id: str(b.evidence_id),
        decision_id: str(b.decision_id),
        output_hash: b.output_hash ?? null,
        ...(e.trace_id !== null ? { trace_id: e.trace_id } : {}),
        entry_hash: e.hash,
      },
    },
  };
  if (inv.kind === "process") {
    const argv = Array.isArray(inv.argv) ? (inv.argv as string[]) : [];
    const binary = str(inv.binary) ?? "unknown";
    return {
      ...base(
        e,
        { uid: 1007, name: "Process Activity", cat: 1, catName: "System Activity" },
        { id: 1, name: "Launch" },
      ),
      ...common,
      device: { type_id: 0, type: "Unknown", name: "warden" },
      process: {
        uid: str(b.evidence_id) ?? "unknown",
        name: binary,
        cmd_line: argv.length > 0 ? argv.join(" ") : binary,
      },
      observables: [
        { name: "actor.user.uid", type_id: 4, type: "User Name", value: principal },
        { name: "process.name", type_id: 9, type: "Process Name", value: binary },
      ],
      ...(num(exit.code) !== undefined ? { exit_code: exit.code } : {}),
    };
  }
  const action = str(t.action) ?? "unknown";
  const act = apiActivity(action);
  const url = str(inv.url);
  const host = url !== undefined ? hostOf({ url }) : undefined;
  return {
    ...base(
      e,
      { uid: 6003, name: "API Activity", cat: 6, catName: "Application Activity" },
      { id: act, name: API_ACTIVITY[act] },
    ),
    ...common,
    api: {
      operation: `${str(t.class) ?? "unknown"}.${action}`,
      service: { name: tool, version: str(t.version) },
      request: { uid: str(b.decision_id) ?? "unknown" },
      response: {
        code: num(exit.http_status) ?? num(exit.code) ?? 0,
        ...(b.error_code !== undefined ? { error: b.error_code } : {}),
      },
    },
    src_endpoint: { name: "warden", svc_name: "warden-executor" },
    dst_endpoint: host !== undefined ? { hostname: host, svc_name: tool } : { name: tool, svc_name: tool },
    resources: [{ name: tool, type: "tool", uid: `${str(t.class) ?? "unknown"}.${action}` }],
    ...(url !== undefined
      ? { http_request: { http_method: str(inv.method), url: { url_string: url, hostname: host } } }
      : {}),
    observables: [{ name: "actor.user.uid", type_id: 4, type: "User Name", value: principal }],
  };
}

/** The OCSF event of a journal entry, or undefined when its type has none. */
export function toOcsf(e: JournalEntry): OcsfEvent | undefined {
  if (e.type === "warden.gate.decision") return decisionEvent(e);
  if (e.type === "warden.executor.evidence") return executionEvent(e);
  return undefined;
}
