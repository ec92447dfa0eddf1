// OCSF 1.3.0 and CEF exports over a real journal written by a real sidecar: every event
// carries its class's required attributes and its recommended ones (or is on the table's
// list of recommended attributes Warden has no data for, with the reason), a tampered
// journal exports nothing, and the CEF lines escape what CEF says to escape.
import { cpSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  cefFormat,
  cefOf,
  OCSF_VERSION,
  type OcsfEvent,
  ocsfFormat,
  toCef,
  toOcsf,
} from "../../src/telemetry/index.js";
import { tamperSegmentEntry } from "../helpers/tamper-segments.js";
import { echo, type Sidecar, startTestSidecar, TOKENS } from "../server/harness.js";

/**
 * OCSF 1.3.0, as its schema defines them (events/base_event.json, includes/classification.json,
 * includes/occurrence.json, events/application/api.json, events/system/system.json + process.json,
 * objects/*.json): required and recommended attributes per class, and per object where used.
 */
const OCSF = {
  base: {
    required: ["activity_id", "category_uid", "class_uid", "metadata", "severity_id", "time", "type_uid"],
    recommended: [
      "message",
      "observables",
      "status",
      "status_code",
      "status_detail",
      "status_id",
      "timezone_offset",
    ],
  },
  6003: {
    required: ["actor", "api", "src_endpoint"],
    recommended: ["dst_endpoint", "http_request", "resources"],
  },
  1007: {
    required: ["actor", "device", "process"],
    recommended: [
      "actual_permissions",
      "exit_code",
      "injection_type",
      "injection_type_id",
      "module",
      "requested_permissions",
    ],
  },
  objects: {
    metadata: {
      required: ["product", "version"],
      recommended: ["log_name", "log_provider", "original_time", "tenant_uid"],
    },
    "metadata.product": { required: ["vendor_name"], recommended: ["version"] },
    api: { required: ["operation"], recommended: ["request", "response"] },
    "api.request": { required: ["uid"], recommended: [] },
    device: { required: ["type_id"], recommended: [] },
  },
  atLeastOne: {
    actor: ["process", "user", "invoked_by", "session", "app_name", "app_uid"],
    "actor.user": ["account", "name", "uid"],
    src_endpoint: [
      "ip",
      "uid",
      "name",
      "hostname",
      "svc_name",
      "instance_uid",
      "interface_uid",
      "interface_name",
    ],
    dst_endpoint: [
      "ip",
      "uid",
      "name",
      "hostname",
      "svc_name",
      "instance_uid",
      "interface_uid",
      "interface_name",
    ],
    process: ["pid", "uid"],
  },
} as const;

/** Recommended attributes Warden has no data for, per class / object, and why (docs/telemetry.md). */
const NOT_APPLICABLE: Record<string, Record<string, string>> = {
  6003: { http_request: "only calls with a url parameter or an HTTP invocation have one" },
  1007: {
    actual_permissions: "the process executor does not observe permissions",
    injection_type: "not an injection",
    injection_type_id: "not an injection",
    module: "no module load",
    requested_permissions: "the process executor does not request permissions",
    exit_code: "absent only when the process never exited (killed, timeout)",
  },
  metadata: { tenant_uid: "execution evidence names no tenant" },
  api: { request: "", response: "a decision has no response (only an execution does)" },
};

const get = (o: unknown, path: string): unknown =>
  path === ""
    ? o
    : path
        .split(".")
        .reduce<unknown>(
          (v, k) => (v !== null && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined),
          o,
        );

function checkEvent(ev: OcsfEvent): string[] {
  const problems: string[] = [];
  const cls = OCSF[ev.class_uid as 6003 | 1007];
  if (cls === undefined) return [`unexpected class ${ev.class_uid}`];
  const check = (
    where: string,
    spec: { required: readonly string[]; recommended: readonly string[] },
    na: Record<string, string> = {},
  ) => {
    const o = get(ev, where);
    if (o === undefined) return;
    for (const a of spec.required)
      if (get(o, a) === undefined) problems.push(`${where || "event"}: required ${a} missing`);
    for (const a of spec.recommended)
      if (get(o, a) === undefined && !(a in na))
        problems.push(`${where || "event"}: recommended ${a} missing`);
  };
  check("", OCSF.base);
  check("", cls, NOT_APPLICABLE[ev.class_uid]);
  for (const [k, spec] of Object.entries(OCSF.objects)) check(k, spec, NOT_APPLICABLE[k]);
  for (const [k, any] of Object.entries(OCSF.atLeastOne)) {
    const o = get(ev, k);
    if (o !== undefined && !any.some((a) => get(o, a) !== undefined))
      problems.push(`${k}: none of ${any.join(", ")}`);
  }
  if (ev.type_uid !== ev.class_uid * 100 + ev.activity_id)
    problems.push("type_uid is not class_uid * 100 + activity_id");
  if (get(ev, "metadata.version") !== OCSF_VERSION) problems.push("metadata.version");
  if (!Number.isInteger(ev.time)) problems.push("time is not epoch milliseconds");
  return problems;
}

let sc: Sidecar;
let db = "";
let keys: string[] = [];

beforeAll(async () => {
  sc = await startTestSidecar();
  const run = await sc.run("a");
  const call = (body: Record<string, unknown>) => sc.call("/v1/execute", { token: TOKENS.agentA, body });
  expect((await call(echo("hello", { runId: run }))).status).toBe(200);
  expect((await call(echo("rm -rf /", { runId: run }))).body.decision).toBe("deny");
  const get1 = await call({
    runId: run,
    toolClass: "http",
    action: "get",
    tool: "slow_fetch",
    parameters: { ms: 0 },
  });
  expect(get1.body.decision).toBe("allow");
  db = join(sc.dir, "journal.db");
  keys = [join(sc.dir, "journal.pub.pem")];
});
afterAll(() => sc.stop());

async function exportLines(
  f: typeof ocsfFormat,
  o: Partial<Parameters<typeof ocsfFormat>[0]> = {},
): Promise<string[]> {
  const lines: string[] = [];
  const n = await f({ db, keys, write: (l) => lines.push(l), ...o });
  expect(n).toBe(lines.length);
  return lines;
}

describe("ocsf export over a sidecar's journal", () => {
  it("maps decisions to API Activity and executions to Process or API Activity, each complete", async () => {
    const events = (await exportLines(ocsfFormat)).map((l) => JSON.parse(l) as OcsfEvent);
    const decisions = events.filter(
      (e) => e.metadata && get(e, "metadata.log_name") === "warden.gate.decision",
    );
    const executions = events.filter((e) => get(e, "metadata.log_name") === "warden.executor.evidence");
    expect(decisions).toHaveLength(3);
    expect(executions).toHaveLength(2);
    expect(executions.map((e) => e.class_uid).sort()).toEqual([1007, 6003]);
    for (const ev of events) expect(checkEvent(ev), JSON.stringify(ev)).toEqual([]);
    const denied = decisions.find((e) => get(e, "actor.authorizations.0.decision") === "deny")!;
    expect(denied).toMatchObject({ status_id: 2, status: "Failure", class_uid: 6003, activity_id: 1 });
    expect(get(denied, "unmapped.warden.reason_codes")).toEqual(["RULE:deny-rm"]);
    const launched = executions.find((e) => e.class_uid === 1007)!;
    expect(launched).toMatchObject({ activity_id: 1, type_uid: 100701, status_id: 1, exit_code: 0 });
  });

  it("filters by run and by sequence range", async () => {
    expect(await exportLines(ocsfFormat, { run: "run-nobody" })).toEqual([]);
    const all = await exportLines(ocsfFormat);
    const first = JSON.parse(all[0] as string) as OcsfEvent;
    const seq = get(first, "metadata.sequence") as number;
    expect(await exportLines(ocsfFormat, { from: String(seq), to: String(seq) })).toHaveLength(1);
  });

  it("a journal with an entry altered after signing exports nothing and names the entry", async () => {
    const copy = join(sc.dir, "tampered.db");
    const d = new Database(db, { readonly: true });
    await d.backup(copy);
    d.close();
    // A segment journal: its segments beside the copy of its index; one entry is edited and re-framed.
    cpSync(`${db}.segments`, `${copy}.segments`, { recursive: true });
    tamperSegmentEntry(copy, '"decision":"deny"', '"decision":"DENY"', (t) =>
      t.includes('"warden.gate.decision"'),
    );
    const lines: string[] = [];
    await expect(ocsfFormat({ db: copy, keys, write: (l) => lines.push(l) })).rejects.toMatchObject({
      code: "ERR_CLI_INPUT",
    });
    expect(lines).toEqual([]);
  });

  it("refuses to export without a key to verify with", async () => {
    await expect(ocsfFormat({ db, keys: [], write: () => undefined })).rejects.toMatchObject({
      code: "ERR_CLI_USAGE",
    });
  });
});

describe("cef export", () => {
  it("writes one CEF:0 line per event with escaped header and extension values", async () => {
    const lines = await exportLines(cefFormat);
    expect(lines).toHaveLength(5);
    for (const l of lines) {
      expect(l).toMatch(/^CEF:0\|Warden\|Warden\|[^|]+\|[^|]+\|[^|]+\|\d{1,2}\|/);
      // One line each: the terminator, and no line break smuggled inside (escaped).
      expect(l.endsWith("\n")).toBe(true);
      expect(l.slice(0, -1)).not.toMatch(/[\r\n]/);
    }
    const deny = lines.find((l) => l.includes("warden.gate.decision:deny"))!;
    expect(deny).toContain("act=deny");
    expect(deny).toContain("suser=agent-a");
    // "rm -rf /" reached the message; an `=` in a value would be escaped as \=
    expect(deny).toMatch(/msg=deny shell\.exec|msg=deny echo_tool/);
  });
});

describe("cef escaping", () => {
  it("escapes = and line breaks in extension values and | in header fields", () => {
    const entry = {
      seq: 1,
      time: "2026-01-01T00:00:00.000Z",
      type: "warden.gate.decision",
      run_id: "run=1",
      trace_id: null,
      body: {
        decision: "deny",
        decision_id: "d-1",
        principal_id: "agent=x",
        tool_class: "http",
        action: "get",
        tool: "a|b",
        reason_codes: ["line\nbreak"],
        matched_rules: [],
        policy_bundle_hash: "sha256:00",
      },
      prev_hash: "sha256:00",
      hash: "sha256:11",
      key_id: "k",
      signature: "s",
    } as unknown as Parameters<typeof toCef>[0];
    const line = toCef(entry)!;
    expect(line.split("\n")).toHaveLength(1);
    expect(line).toContain("suser=agent\\=x");
    expect(line).toContain("cs1=run\\=1");
    expect(line).toContain("reason=line\\nbreak");
    expect(line).toMatch(
      /^CEF:0\|Warden\|Warden\|0\.1\.0\|warden\.gate\.decision:deny\|API Activity: Read\|5\|/,
    );
    const ev = toOcsf(entry)!;
    expect(cefOf({ ...ev, type_name: "x|y\\z" }, "t")).toContain("|x\\|y\\\\z|");
  });
});
