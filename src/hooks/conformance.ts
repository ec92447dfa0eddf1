// `warden hooks conformance` (AARTS §11): drives an engine through every hook and tool
// category a conformance level requires, with benign and hostile events, and checks the
// handshake, the verdict kinds, the directives, ask resolution and the engine's failure
// policy; then checks Warden's own HookHost against scripted engines (conformance-host.ts).
// Every row is an executed scenario: an event sent over the transport and its answer
// judged, never a lookup of what the engine claims to support.
import { HOOK_CASES, type HostileExpectation, LEVEL_TOOLS, TOOL_CASES } from "./conformance-cases.js";
import { hostConformance } from "./conformance-host.js";
import { HookHost, type HostOutcome } from "./host.js";
import { codeOf, type EngineTransport } from "./host-transport.js";
import type { HookDecision } from "./schema-base.js";
import { HOOK_POINTS, HOOK_TABLE, type HookPoint } from "./schema-points.js";

export type Level = 1 | 2 | 3;

export interface ConformanceRow {
  group:
    | "handshake"
    | "hooks"
    | "tools"
    | "verdicts"
    | "directives"
    | "ask resolution"
    | "failure policy"
    | "host";
  check: string;
  pass: boolean;
  /** False for rows about Warden's extensions: a failure is shown but does not fail the run. */
  required: boolean;
  detail: string;
}

export interface ConformanceReport {
  level: Level;
  engine: string;
  passed: boolean;
  /** Hook points and tool categories whose every check passed (of those the level requires). */
  coverage: { hooks: string[]; hooksRequired: number; tools: string[]; toolsRequired: number };
  rows: ConformanceRow[];
}

export interface ConformanceOptions {
  level: Level;
  /** A label for the report ("in-process", the command, the URL). */
  engine: string;
  transport: EngineTransport;
  /** The workspace the scenarios' sessions announce in SessionStart. */
  workspace: string;
  /** Run the HookHost checks too (default true). */
  host?: boolean;
}

const row = (
  group: ConformanceRow["group"],
  check: string,
  pass: boolean,
  detail: string,
  required = true,
): ConformanceRow => ({ group, check, pass, required, detail });

function describe(o: HostOutcome): string {
  const v = o.verdict;
  const via = o.failure ? ` via failure policy ${o.failure.code}` : "";
  return `${v.decision}${v.matched_rule_id ? ` (${v.matched_rule_id})` : ""}${via}`;
}

/** One scenario per session, so one attack's consequences do not decide another's. */
class Driver {
  readonly decisions = new Set<HookDecision>();
  #n = 0;
  constructor(
    readonly host: HookHost,
    readonly workspace: string,
  ) {}

  async session(label: string): Promise<HookHost> {
    const s = this.host.withSession(`conformance-${++this.#n}-${label}`.slice(0, 200));
    await s.fire("SessionStart", { environment: { cwd: this.workspace } });
    return s;
  }

  async fire(s: HookHost, point: HookPoint, fields: Record<string, unknown>): Promise<HostOutcome> {
    const o = await s.fire(point, fields);
    if (!o.failure) this.decisions.add(o.verdict.decision);
    return o;
  }
}

function judgeHostile(o: HostOutcome, expect: HostileExpectation): boolean {
  if (o.failure) return false;
  if (expect === "block") return o.verdict.decision !== "allow";
  return o.verdict.decision !== "allow" || (o.proceed && o.directives.replacement_text !== undefined);
}

async function hookRows(d: Driver, level: Level): Promise<ConformanceRow[]> {
  const rows: ConformanceRow[] = [];
  for (const point of HOOK_POINTS.filter((p) => HOOK_TABLE[p].level <= level)) {
    const c = HOOK_CASES[point];
    const benign = await d.fire(await d.session(`${point}-benign`), point, c.benign);
    const answered = !benign.failure && benign.decidedBy !== "failure_policy";
    rows.push(
      row(
        "hooks",
        `${point}: benign event answered, not denied`,
        answered && benign.verdict.decision !== "deny",
        describe(benign),
      ),
    );
    if (c.hostile === undefined) continue;
    const hostile = await d.fire(await d.session(`${point}-hostile`), point, c.hostile.fields);
    rows.push(
      row(
        "hooks",
        `${point}: ${c.hostile.what} → ${c.hostile.expect}`,
        judgeHostile(hostile, c.hostile.expect),
        describe(hostile),
      ),
    );
  }
  return rows;
}

async function toolRows(d: Driver, level: Level): Promise<ConformanceRow[]> {
  const rows: ConformanceRow[] = [];
  for (const tool of LEVEL_TOOLS[level]) {
    const c = TOOL_CASES[tool];
    const benign = await d.fire(await d.session(`${tool}-benign`), "PreToolUse", c.benign);
    const ok = !benign.failure && benign.verdict.decision !== "deny";
    rows.push(row("tools", `${tool}: benign call not denied`, ok, describe(benign)));
    if (c.hostile === undefined) continue;
    const hostile = await d.fire(await d.session(`${tool}-hostile`), "PreToolUse", c.hostile);
    rows.push(
      row("tools", `${tool}: hostile call blocked`, judgeHostile(hostile, "block"), describe(hostile)),
    );
  }
  return rows;
}

async function directiveRows(d: Driver): Promise<ConformanceRow[]> {
  const spawn = await d.fire(
    await d.session("permitted"),
    "PreSubAgentSpawn",
    HOOK_CASES.PreSubAgentSpawn.benign,
  );
  const permitted = spawn.proceed ? spawn.directives.permitted_tools : undefined;
  const skill = { ...(HOOK_CASES.PreSkillLoad.benign as Record<string, unknown>), source: "project" };
  const skillOut = await d.fire(await d.session("strip"), "PreSkillLoad", {
    ...skill,
    declared_hooks: [{ event: "PreToolUse", command: "sh hook.sh" }],
  });
  const s = await d.session("inject");
  await d.fire(s, "PreToolUse", TOOL_CASES.shell.hostile ?? {});
  const compact = await d.fire(s, "PostCompact", {
    turn_id: "t2",
    original_value: "before",
    modified_value: "after",
    was_modified: true,
    modifier_chain: [],
  });
  const inject = compact.proceed ? compact.directives.inject_context : undefined;
  const out = await d.fire(
    await d.session("mask"),
    "PreOutputDeliver",
    HOOK_CASES.PreOutputDeliver.hostile?.fields ?? {},
  );
  const masked = out.proceed ? out.directives.replacement_text : undefined;
  return [
    row(
      "directives",
      "PreSubAgentSpawn: permitted_tools within the requested tools",
      Array.isArray(permitted) && permitted.every((t) => t === "file_read"),
      JSON.stringify(permitted ?? null),
    ),
    row(
      "directives",
      "PreSkillLoad: strip_hooks for a project skill declaring hooks",
      skillOut.proceed && skillOut.directives.strip_hooks === true,
      describe(skillOut),
    ),
    row(
      "directives",
      "PostCompact: inject_context re-injects a prior denial",
      inject !== undefined && /deni/i.test(inject.content),
      inject ? inject.position : "none",
    ),
    row(
      "directives",
      "PreOutputDeliver: masked replacement_text (Warden extension)",
      typeof masked === "string" && !masked.includes("ghp_"),
      masked ? "masked" : "none",
      false,
    ),
  ];
}

async function askRows(d: Driver): Promise<ConformanceRow[]> {
  const s = await d.session("ask");
  const call = {
    turn_id: "t1",
    tool_name: "shell",
    tool_name_native: "Bash",
    tool_input: { command: "sudo ls /root" },
    artifacts: [],
  };
  const first = await d.fire(s, "PreToolUse", call);
  if (first.verdict.decision !== "ask")
    return [row("ask resolution", "an ask verdict to resolve (sudo)", false, describe(first))];
  const offered = first.verdict.suggested_resolutions ?? [];
  const note = await d.fire(s, "PostAskResolution", {
    turn_id: "t1",
    original_hook_point: "PreToolUse",
    original_verdict: first.verdict,
    resolution: "allow_always",
  });
  const again = await d.fire(s, "PreToolUse", call);
  return [
    row(
      "ask resolution",
      "ask offers suggested_resolutions",
      offered.length > 0,
      offered.join(", ") || "none",
    ),
    row("ask resolution", "PostAskResolution accepted", !note.failure, describe(note)),
    row(
      "ask resolution",
      "allow_always is remembered for the same artifact",
      again.verdict.decision === "allow",
      describe(again),
    ),
  ];
}

/** Sends raw messages (not through the host's checks) and expects a coded refusal. */
async function refusal(t: EngineTransport, message: unknown, code: string): Promise<[boolean, string]> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), 10_000);
  try {
    const v = (await t.send(message, ac.signal)) as { decision?: string; error_code?: string };
    return [v.decision === "deny" && v.error_code === code, `${v.decision} ${v.error_code ?? ""}`];
  } catch (err) {
    return [codeOf(err) === code, codeOf(err)];
  } finally {
    clearTimeout(timer);
  }
}

async function failureRows(t: EngineTransport, host: HookHost): Promise<ConformanceRow[]> {
  const base = host.event("PreToolUse", TOOL_CASES.shell.benign);
  const malformed = await refusal(
    t,
    { ...base, tool_name: undefined, tool_input: undefined },
    "ERR_HOOK_EVENT_INVALID",
  );
  const unknown = await refusal(t, { ...base, hook_point: "PreTeleport" }, "ERR_HOOK_POINT_UNKNOWN");
  const version = await refusal(t, { ...base, aarts_version: "99" }, "ERR_HOOK_HANDSHAKE_REQUIRED");
  return [
    row("failure policy", "a malformed event is refused (deny, coded)", ...malformed),
    row("failure policy", "an unknown hook point is refused (deny, coded)", ...unknown),
    row("failure policy", "an event of an unsupported AARTS version is refused", ...version),
  ];
}

async function handshakeRows(t: EngineTransport): Promise<ConformanceRow[]> {
  const check = async (v: string) => {
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), 10_000);
    try {
      return (await t.versionCheck({ aarts_version: v }, ac.signal)) as {
        compatible?: unknown;
        error?: string;
      };
    } catch (err) {
      return { compatible: undefined, error: codeOf(err) };
    } finally {
      clearTimeout(timer);
    }
  };
  const bad = await check("99");
  const event = {
    hook_point: "PreToolUse",
    session_id: "conformance-incompatible",
    timestamp: new Date().toISOString(),
    host_id: "warden-conformance",
    aarts_version: "1",
    ...TOOL_CASES.shell.benign,
  };
  const blocked = await refusal(t, event, "ERR_HOOK_HANDSHAKE_REQUIRED");
  return [
    row(
      "handshake",
      "an unsupported version gets compatible: false",
      bad.compatible === false,
      JSON.stringify(bad),
    ),
    row("handshake", "no event is evaluated after compatible: false", ...blocked),
  ];
}

export async function runConformance(o: ConformanceOptions): Promise<ConformanceReport> {
  const rows: ConformanceRow[] = [];
  // The incompatible handshake first: connecting afterwards must make the engine compatible again.
  const t = o.transport;
  const refusedRows = await handshakeRowsSafe(t);
  const host = await HookHost.connect({ transport: t, hostId: "warden-conformance" });
  rows.push(
    row("handshake", "AARTS 1 is compatible", host.handshake.compatible, JSON.stringify(host.handshake)),
    ...refusedRows,
  );
  if (host.handshake.compatible) {
    const d = new Driver(host, o.workspace);
    rows.push(...(await hookRows(d, o.level)), ...(await toolRows(d, o.level)));
    if (o.level >= 3) rows.push(...(await directiveRows(d)));
    if (o.level >= 2) rows.push(...(await askRows(d)));
    rows.push(...(await failureRows(t, host)));
    const need: HookDecision[] = o.level === 1 ? ["allow", "deny"] : ["allow", "deny", "ask"];
    for (const k of need)
      rows.push(row("verdicts", `${k} verdicts issued`, d.decisions.has(k), [...d.decisions].join(", ")));
  }
  if (o.host !== false) rows.push(...(await hostConformance()));
  const passed = rows.every((r) => r.pass || !r.required);
  return { level: o.level, engine: o.engine, passed, coverage: coverage(rows, o.level), rows };
}

/** A hook or category is covered when it has checks in its group and all of them passed. */
function coverage(rows: readonly ConformanceRow[], level: Level): ConformanceReport["coverage"] {
  const covered = (group: ConformanceRow["group"], names: readonly string[]) =>
    names.filter((n) => {
      const mine = rows.filter((r) => r.group === group && r.check.startsWith(`${n}:`));
      return mine.length > 0 && mine.every((r) => r.pass);
    });
  const hooks = HOOK_POINTS.filter((p) => HOOK_TABLE[p].level <= level);
  return {
    hooks: covered("hooks", hooks),
    hooksRequired: hooks.length,
    tools: covered("tools", LEVEL_TOOLS[level]),
    toolsRequired: LEVEL_TOOLS[level].length,
  };
}

async function handshakeRowsSafe(t: EngineTransport): Promise<ConformanceRow[]> {
  try {
    return await handshakeRows(t);
  } catch (err) {
    return [row("handshake", "version check", false, codeOf(err))];
  }
}

/** The pass table, one line per check. */
export function formatReport(r: ConformanceReport): string {
  const lines = [`AARTS conformance level ${r.level} — engine ${r.engine}`, ""];
  const width = Math.max(...r.rows.map((x) => x.group.length));
  for (const x of r.rows) {
    const mark = x.pass ? "PASS" : x.required ? "FAIL" : "warn";
    lines.push(`${mark}  ${x.group.padEnd(width)}  ${x.check}  [${x.detail.slice(0, 120)}]`);
  }
  const failed = r.rows.filter((x) => !x.pass && x.required).length;
  const c = r.coverage;
  lines.push(
    "",
    `hooks covered ${c.hooks.length}/${c.hooksRequired}, tool categories covered ${c.tools.length}/${c.toolsRequired}`,
    `${r.rows.length} checks, ${failed} failed: ${r.passed ? "PASS" : "FAIL"} (level ${r.level})`,
  );
  return `${lines.join("\n")}\n`;
}
