// What a conformant host must enforce, as attacks on Warden's HookHost: engines that are
// incompatible, hang, crash, answer garbage or answer late (real child processes speaking
// JSON lines), the failure policy both ways, each directive, asks through the approval
// queue and the engine's memory of ask resolutions.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { InProcessApprovals } from "../../src/gate/index.js";
import {
  approvalQueueAsk,
  createEngine,
  type EngineTransport,
  HookHost,
  type HookHostConfig,
  inProcessTransport,
  type Resolution,
  stdioTransport,
  VerdictSchema,
} from "../../src/hooks/index.js";
import { tempDir, WORKSPACE } from "./helpers.js";

// A scripted engine: answers the version check per MODE, logs every line it receives.
const SCRIPT = `
const fs = require("node:fs");
const [mode, log] = process.argv.slice(1);
let buf = "", n = 0;
const say = (v) => process.stdout.write(JSON.stringify(v) + "\\n");
const allow = { decision: "allow", category: "test", severity: "info", source: "script" };
process.stdin.on("data", (c) => {
  buf += c;
  let i;
  while ((i = buf.indexOf("\\n")) >= 0) {
    const line = buf.slice(0, i); buf = buf.slice(i + 1);
    fs.appendFileSync(log, line + "\\n");
    const m = JSON.parse(line);
    if (!m.hook_point) { say({ compatible: mode !== "incompatible", engine_id: "script" }); continue; }
    n++;
    if (mode === "hang") continue;
    if (mode === "crash") process.exit(3);
    if (mode === "garbage") { process.stdout.write("not json\\n"); continue; }
    if (mode === "bad-verdict") { say({ decision: "maybe" }); continue; }
    if (mode === "slow-first" && n === 1) {
      setTimeout(() => say({ ...allow, decision: "deny", reasons: ["late"] }), 400);
      continue;
    }
    say({ ...allow, reasons: ["event " + n] });
  }
});
`;

let hosts: HookHost[] = [];
afterEach(async () => {
  for (const h of hosts) await h.close();
  hosts = [];
});

async function scripted(mode: string, config: Partial<HookHostConfig> = {}) {
  const log = join(tempDir(), "received.jsonl");
  writeFileSync(log, "");
  const transport = stdioTransport(process.execPath, ["-e", SCRIPT, mode, log]);
  const host = await HookHost.connect({
    transport,
    hostId: "test-host",
    timeouts: { toolMs: 200, sessionMs: 2_000 },
    ...config,
  });
  hosts.push(host);
  const received = () => readFileSync(log, "utf8").trim().split("\n").filter(Boolean);
  return { host, received };
}

const tool = (name: string, input: Record<string, unknown>) => ({
  turn_id: "t1",
  tool_name: name,
  tool_input: input,
  artifacts: [],
});
const result = { ...tool("web_request", { url: "https://example.org" }), tool_result: "ok" };

describe("failure policy (§9.1) against misbehaving engines", () => {
  it("an incompatible engine is sent no event, and every hook fails closed", async () => {
    const { host, received } = await scripted("incompatible");
    expect(host.handshake).toMatchObject({ compatible: false, code: "ERR_HOOK_HANDSHAKE_REQUIRED" });
    const o = await host.fire("PreToolUse", tool("shell", { command: "ls" }));
    expect(o).toMatchObject({ proceed: false, decidedBy: "failure_policy" });
    expect(o.failure).toEqual({ code: "ERR_HOOK_HANDSHAKE_REQUIRED", mode: "fail-closed" });
    expect(received()).toHaveLength(1); // the version check only
  });

  it("an engine that never answers is timed out and the call is denied (fail-closed default)", async () => {
    const { host } = await scripted("hang");
    const o = await host.fire("PreToolUse", tool("shell", { command: "ls" }));
    expect(o.proceed).toBe(false);
    expect(o.failure).toEqual({ code: "ERR_HOOK_TIMEOUT", mode: "fail-closed" });
  });

  it("fail-open applies only to the listed hooks and only `max` times", async () => {
    const { host } = await scripted("hang", { failure: { failOpen: { hooks: ["PostToolUse"], max: 1 } } });
    const first = await host.fire("PostToolUse", result);
    expect(first).toMatchObject({ proceed: true, failure: { code: "ERR_HOOK_TIMEOUT", mode: "fail-open" } });
    const second = await host.fire("PostToolUse", result);
    expect(second).toMatchObject({ proceed: false, failure: { mode: "fail-closed" } });
    const other = await host.fire("PreToolUse", tool("shell", { command: "ls" }));
    expect(other).toMatchObject({ proceed: false, failure: { mode: "fail-closed" } });
  });

  it("a crashing engine fails closed on that event and on every later one", async () => {
    const { host } = await scripted("crash");
    for (let i = 0; i < 2; i++) {
      const o = await host.fire("PreToolUse", tool("shell", { command: "ls" }));
      expect(o).toMatchObject({
        proceed: false,
        failure: { code: "ERR_HOOK_ENGINE_FAULT", mode: "fail-closed" },
      });
    }
  });

  it("an answer that is not JSON, or not a verdict, is a fault, not an allow", async () => {
    for (const mode of ["garbage", "bad-verdict"]) {
      const { host } = await scripted(mode);
      const o = await host.fire("PreToolUse", tool("shell", { command: "ls" }));
      expect(o).toMatchObject({ proceed: false, failure: { code: "ERR_HOOK_ENGINE_FAULT" } });
    }
  });

  it("a late answer to a timed-out event is not taken as the next event's verdict", async () => {
    const { host } = await scripted("slow-first");
    const first = await host.fire("PreToolUse", tool("shell", { command: "ls" }));
    expect(first.failure?.code).toBe("ERR_HOOK_TIMEOUT");
    await new Promise((r) => setTimeout(r, 500)); // the late "deny" arrives meanwhile
    const second = await host.fire("PreToolUse", tool("shell", { command: "pwd" }));
    expect(second).toMatchObject({ proceed: true, decidedBy: "engine" });
    expect(second.verdict.reasons).toEqual(["event 2"]);
  });
});

/** Warden's engine in process, counting what reaches it. */
async function warden(config: Partial<HookHostConfig> = {}) {
  const engine = await createEngine({ workspace: WORKSPACE });
  const inner = inProcessTransport(engine, { closeEngine: true });
  const sent: string[] = [];
  const transport: EngineTransport = {
    ...inner,
    send: (event, signal) => {
      sent.push(String((event as { hook_point?: unknown }).hook_point));
      return inner.send(event, signal);
    },
  };
  const host = await HookHost.connect({ transport, hostId: "test-host", ...config });
  hosts.push(host);
  return { host, sent, engine };
}

describe("directives (§8.2.2, §8.3.6, §8.5.1) and masking", () => {
  it("a sub-agent's tool outside permitted_tools is denied without consulting the engine", async () => {
    const { host, sent } = await warden();
    const spawn = await host.spawnSubAgent({
      sub_agent_id: "sub-1",
      delegated_task: "find the tests",
      requested_tools: ["file_read"],
    });
    if (!spawn.ok) throw new Error("spawn refused");
    expect(spawn.host.permittedTools).toEqual(["file_read"]);
    const before = sent.length;
    const o = await spawn.host.fire("PreToolUse", tool("shell", { command: "curl https://example.org" }));
    expect(o).toMatchObject({ proceed: false, decidedBy: "host" });
    expect(o.verdict.matched_rule_id).toBe("aarts-permitted-tools");
    expect(sent.length).toBe(before);
    const ok = await spawn.host.fire("PreToolUse", tool("file_read", { file_path: "README.md" }));
    expect(ok).toMatchObject({ proceed: true, decidedBy: "engine" });
    expect(sent.at(-1)).toBe("PreToolUse");
  });

  it("fields cannot rewrite the envelope: a sub-agent stays a sub-agent of its own session", async () => {
    const { host } = await warden();
    const spawn = await host.spawnSubAgent({
      sub_agent_id: "sub-e",
      delegated_task: "x",
      requested_tools: ["shell"],
    });
    if (!spawn.ok) throw new Error("refused");
    const e = spawn.host.event("PreToolUse", {
      ...tool("shell", { command: "ls" }),
      hook_point: "SessionEnd",
      session_id: host.sessionId,
      host_id: "someone-else",
      is_sub_agent: false,
      parent_session_id: "nobody",
    });
    expect(e).toMatchObject({
      hook_point: "PreToolUse",
      session_id: "sub-e",
      host_id: "test-host",
      is_sub_agent: true,
      parent_session_id: host.sessionId,
    });
  });

  it("a grandchild cannot get tools its parent was not permitted, whatever the engine says", async () => {
    const generous: EngineTransport = {
      kind: "in-process",
      versionCheck: async () => ({ compatible: true, engine_id: "generous" }),
      send: async () => ({
        decision: "allow",
        category: "test",
        severity: "info",
        source: "test",
        directives: { permitted_tools: ["shell", "file_read", "web_request"] },
      }),
      close: async () => {},
    };
    const host = await HookHost.connect({ transport: generous, hostId: "test-host" });
    const child = await host.spawnSubAgent({ sub_agent_id: "c", delegated_task: "x" });
    if (!child.ok) throw new Error("refused");
    const narrowed = await child.host.spawnSubAgent({ sub_agent_id: "c2", delegated_task: "y" });
    if (!narrowed.ok) throw new Error("refused");
    expect(narrowed.host.permittedTools).toEqual(["shell", "file_read", "web_request"]);
    // A parent restricted to file_read: the engine's wider list is cut to the ceiling.
    const restricted = await HookHost.connect({
      transport: {
        ...generous,
        send: async (e) =>
          (e as { hook_point: string }).hook_point === "PreSubAgentSpawn" &&
          (e as { sub_agent_id: string }).sub_agent_id === "p"
            ? {
                decision: "allow",
                category: "t",
                severity: "info",
                source: "t",
                directives: { permitted_tools: ["file_read"] },
              }
            : {
                decision: "allow",
                category: "t",
                severity: "info",
                source: "t",
                directives: { permitted_tools: ["shell", "file_read"] },
              },
      },
      hostId: "test-host",
    });
    const p = await restricted.spawnSubAgent({ sub_agent_id: "p", delegated_task: "x" });
    if (!p.ok) throw new Error("refused");
    const g = await p.host.spawnSubAgent({ sub_agent_id: "g", delegated_task: "y" });
    if (!g.ok) throw new Error("refused");
    expect(g.host.permittedTools).toEqual(["file_read"]);
    const o = await g.host.fire("PreToolUse", tool("shell", { command: "ls" }));
    expect(o).toMatchObject({ proceed: false, decidedBy: "host" });
  });

  it("a project skill is loaded with strip_hooks", async () => {
    const { host } = await warden();
    const o = await host.fire("PreSkillLoad", {
      source: "project",
      file_path: "skills/x.md",
      frontmatter: {},
      declared_hooks: [{ event: "PreToolUse", command: "sh x" }],
      body_content: "Be concise.",
      load_context: "main_session",
    });
    expect(o.proceed).toBe(true);
    if (o.proceed) expect(o.directives.strip_hooks).toBe(true);
  });

  it("after a denial, compaction gets inject_context carrying it", async () => {
    const { host } = await warden();
    expect((await host.fire("PreToolUse", tool("shell", { command: "rm -rf /" }))).proceed).toBe(false);
    const o = await host.fire("PostCompact", {
      turn_id: "t2",
      original_value: "a",
      modified_value: "b",
      was_modified: true,
      modifier_chain: [],
    });
    if (!o.proceed) throw new Error("compaction refused");
    expect(o.directives.inject_context?.position).toBe("system");
    expect(o.directives.inject_context?.content).toMatch(/rm -rf \/.*DENIED/);
  });
});

describe("ask (§6.6) and PostAskResolution (§8.8.1)", () => {
  const sudo = tool("shell", { command: "sudo ls /root" });

  it("with no way to ask a human, ask is deny", async () => {
    const { host } = await warden();
    const o = await host.fire("PreToolUse", sudo);
    expect(o.verdict.decision).toBe("ask");
    expect(o).toMatchObject({ proceed: false, decidedBy: "host" });
  });

  it("allow_always is fired as PostAskResolution and the engine remembers it", async () => {
    const answers: Resolution[] = ["allow_always"];
    const { host, sent } = await warden({ ask: { ask: async () => answers.shift() ?? "denied" } });
    const first = await host.fire("PreToolUse", sudo);
    expect(first).toMatchObject({ proceed: true, decidedBy: "user", resolution: "allow_always" });
    expect(sent).toEqual(["PreToolUse", "PostAskResolution"]);
    const again = await host.fire("PreToolUse", sudo);
    expect(again).toMatchObject({ proceed: true, decidedBy: "engine" });
    expect(again.verdict.decision).toBe("allow");
  });

  it("deny_always makes the engine deny the same call from then on", async () => {
    const { host } = await warden({ ask: { ask: async () => "deny_always" } });
    expect(await host.fire("PreToolUse", sudo)).toMatchObject({ proceed: false, decidedBy: "user" });
    const again = await host.fire("PreToolUse", sudo);
    expect(again).toMatchObject({ proceed: false, decidedBy: "engine" });
    expect(again.verdict.decision).toBe("deny");
  });

  it("an answer the verdict did not offer counts as denied", async () => {
    const { host } = await warden({ ask: { ask: async () => "allow_similar" } });
    const o = await host.fire("PreToolUse", sudo);
    expect(o).toMatchObject({ proceed: false, resolution: "denied" });
  });

  it("asks wait in the runtime's approval queue until an approver answers", async () => {
    const approvals = new InProcessApprovals();
    const ask = approvalQueueAsk(approvals, { principalId: "agent-1", runId: "run-1", timeoutMs: 30_000 });
    const { host } = await warden({ ask });
    const pending = host.fire("PreToolUse", sudo);
    for (let i = 0; i < 100 && approvals.pending().length === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    const [req] = approvals.pending();
    expect(req?.request).toMatchObject({ toolClass: "aarts", action: "PreToolUse" });
    const approver = { id: "alice", roles: ["approver"] };
    expect(
      approvals.decide(req?.id ?? "", { outcome: "approve", approver, justification: "checked the command" }),
    ).toEqual({ ok: true });
    expect(await pending).toMatchObject({ proceed: true, decidedBy: "user", resolution: "approved" });
  });

  it("an approver's denial (or no answer) blocks", async () => {
    const approvals = new InProcessApprovals();
    const ask = approvalQueueAsk(approvals, { principalId: "agent-1", runId: "run-1", timeoutMs: 50 });
    const { host } = await warden({ ask });
    expect(await host.fire("PreToolUse", sudo)).toMatchObject({ proceed: false, resolution: "denied" });
  });
});

describe("whatever an engine answers", () => {
  it("fire never throws, and only a well-formed allow lets a blocking hook proceed", async () => {
    const answer = fc.oneof(
      fc.jsonValue(),
      fc.record({
        decision: fc.constantFrom("allow", "deny", "ask", "maybe"),
        category: fc.string(),
        severity: fc.constantFrom("info", "warning", "critical", "loud"),
        source: fc.string(),
      }),
    );
    await fc.assert(
      fc.asyncProperty(answer, async (a) => {
        const t: EngineTransport = {
          kind: "in-process",
          versionCheck: async () => ({ compatible: true, engine_id: "fuzz" }),
          send: async () => a,
          close: async () => {},
        };
        const host = await HookHost.connect({ transport: t, hostId: "test-host" });
        const o = await host.fire("PreToolUse", tool("shell", { command: "ls" }));
        const v = VerdictSchema.safeParse(a);
        expect(o.proceed).toBe(v.success && v.data.decision === "allow");
        if (!v.success) expect(o.failure).toEqual({ code: "ERR_HOOK_ENGINE_FAULT", mode: "fail-closed" });
      }),
      { numRuns: 200 },
    );
  });
});
