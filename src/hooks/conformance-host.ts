// The host half of `warden hooks conformance`: Warden's HookHost against scripted engines
// (in-memory transports that answer what a check needs: a deny, an ask, nothing at all, a
// crash, garbage, an incompatible version, directives). Each row runs the host and looks at
// what it did — what it sent, what it let proceed — as a conformant host must (§4.2, §6.6,
// §8.0, §8.5.1, §9.1).
import type { ConformanceRow } from "./conformance.js";
import { type AskPort, HookHost, type HookHostConfig } from "./host.js";
import type { EngineTransport } from "./host-transport.js";
import type { Verdict } from "./schema-base.js";

type Answer = (event: Record<string, unknown>) => Promise<unknown>;

/** A scripted engine: records every event it receives and answers with `answer`. */
function scripted(
  answer: Answer,
  compatible = true,
): EngineTransport & { received: Record<string, unknown>[] } {
  const received: Record<string, unknown>[] = [];
  return {
    kind: "in-process",
    received,
    versionCheck: async () => ({ compatible, engine_id: "scripted" }),
    send: async (event) => {
      received.push(event as Record<string, unknown>);
      return answer(event as Record<string, unknown>);
    },
    close: async () => {},
  };
}

const verdict = (decision: Verdict["decision"], extra: Partial<Verdict> = {}): Verdict => ({
  decision,
  category: "test",
  severity: decision === "allow" ? "info" : "critical",
  source: "scripted",
  ...extra,
});

const TOOL = { turn_id: "t1", tool_name: "shell", tool_input: { command: "ls" }, artifacts: [] };

async function host(t: EngineTransport, extra: Partial<HookHostConfig> = {}): Promise<HookHost> {
  return HookHost.connect({
    transport: t,
    hostId: "conformance-host",
    timeouts: { toolMs: 100, sessionMs: 500 },
    ...extra,
  });
}

const row = (check: string, pass: boolean, detail: string): ConformanceRow => ({
  group: "host",
  check,
  pass,
  required: true,
  detail,
});

async function verdictRows(): Promise<ConformanceRow[]> {
  const deny = await (await host(scripted(async () => verdict("deny")))).fire("PreToolUse", TOOL);
  const ask = scripted(async () => verdict("ask", { suggested_resolutions: ["allow_always"] }));
  const noPrompt = await (await host(ask)).fire("PreToolUse", TOOL);
  const prompt: AskPort = { ask: async () => "allow_always" };
  const asked = scripted(async (e) =>
    e.hook_point === "PostAskResolution"
      ? verdict("allow")
      : verdict("ask", { suggested_resolutions: ["allow_always"] }),
  );
  const approved = await (await host(asked, { ask: prompt })).fire("PreToolUse", TOOL);
  const resolution = asked.received.find((e) => e.hook_point === "PostAskResolution");
  const note = await (await host(scripted(async () => verdict("deny")))).fire("SessionEnd", {});
  return [
    row("deny blocks the action", !deny.proceed, deny.decidedBy),
    row("ask without an interactive prompt is deny", !noPrompt.proceed, noPrompt.decidedBy),
    row(
      "ask is put to the user; the answer is fired as PostAskResolution",
      approved.proceed && resolution?.resolution === "allow_always",
      String(resolution?.resolution ?? "not fired"),
    ),
    row("a notification hook never blocks", note.proceed, note.verdict.decision),
  ];
}

async function failureRows(): Promise<ConformanceRow[]> {
  const incompatible = scripted(async () => verdict("allow"), false);
  const refused = await (await host(incompatible)).fire("PreToolUse", TOOL);
  const hang = await (await host(scripted(() => new Promise(() => {})))).fire("PreToolUse", TOOL);
  const crash = await (
    await host(
      scripted(async () => {
        throw new Error("crashed");
      }),
    )
  ).fire("PreToolUse", TOOL);
  const garbage = await (await host(scripted(async () => ({ decision: "perhaps" })))).fire(
    "PreToolUse",
    TOOL,
  );
  const open = await host(
    scripted(() => new Promise(() => {})),
    { failure: { failOpen: { hooks: ["PostToolUse"], max: 1 } } },
  );
  const result = { ...TOOL, tool_result: "ok" };
  const [o1, o2] = [await open.fire("PostToolUse", result), await open.fire("PostToolUse", result)];
  return [
    row(
      "no event is sent to an incompatible engine; the action fails closed",
      incompatible.received.length === 0 && !refused.proceed,
      `${incompatible.received.length} sent`,
    ),
    row(
      "an engine that does not answer times out: fail-closed deny",
      !hang.proceed && hang.failure?.code === "ERR_HOOK_TIMEOUT",
      hang.failure?.code ?? "-",
    ),
    row(
      "an engine that crashes: fail-closed deny",
      !crash.proceed && crash.failure?.mode === "fail-closed",
      crash.failure?.code ?? "-",
    ),
    row(
      "an answer that is not a verdict: fail-closed deny",
      !garbage.proceed && garbage.failure !== undefined,
      garbage.failure?.code ?? "-",
    ),
    row(
      "fail-open only for listed hooks, at most max times",
      o1.proceed && o1.failure?.mode === "fail-open" && !o2.proceed,
      `${o1.failure?.mode}, then ${o2.failure?.mode}`,
    ),
  ];
}

async function directiveRows(): Promise<ConformanceRow[]> {
  const engine = scripted(async (e) =>
    e.hook_point === "PreSubAgentSpawn"
      ? verdict("allow", { directives: { permitted_tools: ["file_read"] } })
      : verdict("allow", {
          directives: { inject_context: { position: "system", content: "kept" }, strip_hooks: true },
        }),
  );
  const h = await host(engine);
  const spawn = await h.spawnSubAgent({ sub_agent_id: "sub", delegated_task: "look" });
  const before = engine.received.length;
  const child = spawn.ok ? await spawn.host.fire("PreToolUse", TOOL) : undefined;
  const consulted = engine.received.length - before;
  const compact = await h.fire("PostCompact", {
    turn_id: "t1",
    original_value: "a",
    modified_value: "b",
    was_modified: true,
    modifier_chain: [],
  });
  const passed = compact.proceed ? compact.directives : {};
  return [
    row(
      "permitted_tools is enforced without consulting the engine",
      child !== undefined && !child.proceed && consulted === 0,
      child?.decidedBy ?? "spawn refused",
    ),
    row(
      "inject_context and strip_hooks reach the caller",
      passed.inject_context?.content === "kept" && passed.strip_hooks === true,
      Object.keys(passed).join(", "),
    ),
  ];
}

/** Warden's HookHost against scripted engines. */
export async function hostConformance(): Promise<ConformanceRow[]> {
  return [...(await verdictRows()), ...(await failureRows()), ...(await directiveRows())];
}
