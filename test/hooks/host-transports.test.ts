// The HookHost against Warden's real engine on each of the three transports: in process,
// the built `warden hooks serve --stdio` as a child process, and the HTTP routes of a real
// sidecar started here. The same table runs on each: the handshake, every one of the 20
// hook points benign (answered by the engine, proceed), every hostile scenario (blocked or
// masked by the engine), and a malformed event refused with a code.
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createEngine,
  type EngineTransport,
  HOOK_CASES,
  HOOK_POINTS,
  HookHost,
  type HookPoint,
  hostSecretPath,
  hostToolsPolicyPath,
  httpTransport,
  inProcessTransport,
  secretFile,
  stdioTransport,
} from "../../src/hooks/index.js";
import { hashToken } from "../../src/server/index.js";
import { type Sidecar, startTestSidecar } from "../server/harness.js";
import { tempDir, WORKSPACE } from "./helpers.js";

const ROOT = resolve(import.meta.dirname, "../..");
const HOST_TOKEN = "token-host-transport-0123456789";

interface Rig {
  transport(): Promise<EngineTransport>;
  stop(): Promise<void>;
}

let sidecar: Sidecar | undefined;

const RIGS: Record<string, Rig> = {
  "in-process": {
    transport: async () =>
      inProcessTransport(await createEngine({ workspace: WORKSPACE }), { closeEngine: true }),
    stop: async () => {},
  },
  stdio: {
    transport: async () => {
      if (!existsSync(join(ROOT, "dist/src/cli/main.js")))
        throw new Error("run `npm run build` first (npm test does)");
      const dir = tempDir();
      const args = [join(ROOT, "bin/warden.js"), "hooks", "serve", "--stdio", "--dir", dir];
      // The launcher is the host: it presents the hooks dir's secret in the handshake.
      const hostSecret = secretFile(hostSecretPath(dir));
      return stdioTransport(process.execPath, [...args, "--workspace", WORKSPACE], { hostSecret });
    },
    stop: async () => {},
  },
  http: {
    transport: async () => {
      sidecar ??= await startTestSidecar({
        requireContract: false,
        config: {
          policies: [hostToolsPolicyPath()],
          gate: {
            tenant: "test",
            environment: "test",
            requireContract: false,
            principals: [{ id: "host-t", roles: ["host"] }],
          },
          auth: { principals: [{ id: "host-t", tokenSha256: hashToken(HOST_TOKEN) }] },
        },
      });
      return httpTransport(sidecar.url, HOST_TOKEN);
    },
    stop: async () => {
      await sidecar?.stop();
      sidecar = undefined;
    },
  },
};

const HOSTILE = HOOK_POINTS.filter((p) => HOOK_CASES[p].hostile !== undefined);

describe.each(Object.keys(RIGS))("the HookHost over the %s transport", (kind) => {
  const rig = RIGS[kind] as Rig;
  let host: HookHost;
  beforeAll(async () => {
    host = await HookHost.connect({ transport: await rig.transport(), hostId: "test-host" });
    // A workspace for engines that are not configured with one (the sidecar's).
    await host.fire("SessionStart", { environment: { cwd: WORKSPACE } });
  }, 60_000);
  afterAll(async () => {
    await host.close();
    await rig.stop();
  });

  it("runs the version handshake first and finds the engine compatible", () => {
    expect(host.handshake).toMatchObject({ compatible: true, engineId: "warden" });
    expect(host.transportKind).toBe(kind);
  });

  it.each(HOOK_POINTS)("fires %s: the engine answers and the benign event proceeds", async (point) => {
    const o = await host.withSession(`benign-${point}`).fire(point, HOOK_CASES[point].benign);
    expect(o.decidedBy).toBe("engine");
    expect(o.proceed).toBe(true);
    expect(o.failure).toBeUndefined();
  });

  it.each(HOSTILE)("a hostile %s is stopped by the engine", async (point: HookPoint) => {
    const c = HOOK_CASES[point].hostile;
    if (c === undefined) throw new Error("no hostile case");
    const s = host.withSession(`hostile-${point}`);
    await s.fire("SessionStart", { environment: { cwd: WORKSPACE } });
    const o = await s.fire(point, c.fields);
    expect(o.failure).toBeUndefined();
    if (c.expect === "block") {
      expect(o.proceed, c.what).toBe(false);
      // Denied by the engine, or an ask the host could not put to anyone (treated as deny).
      expect(["engine", "host"]).toContain(o.decidedBy);
      expect(["deny", "ask"]).toContain(o.verdict.decision);
    } else {
      expect(o.proceed).toBe(true);
      if (!o.proceed) return;
      expect(o.directives.replacement_text).toContain("[REDACTED:");
    }
  });

  it("a malformed event is refused with a code and blocks (fail-closed)", async () => {
    const o = await host.withSession("malformed").fire("PreToolUse", { turn_id: "t1", tool_input: {} });
    expect(o.proceed).toBe(false);
    expect(o.verdict.decision).toBe("deny");
    // In process and stdio the engine answers its failure verdict; over HTTP the sidecar
    // answers 400, which the host turns into its own failure policy.
    const code = o.failure?.code ?? (o.verdict as { error_code?: string }).error_code;
    expect(code).toBe("ERR_HOOK_EVENT_INVALID");
  });

  it("an unknown hook point is refused with ERR_HOOK_POINT_UNKNOWN", async () => {
    const o = await host.withSession("unknown").fire("NoSuchHook" as HookPoint, { turn_id: "t1" });
    expect(o.proceed).toBe(false);
    expect(o.failure?.code ?? (o.verdict as { error_code?: string }).error_code).toBe(
      "ERR_HOOK_POINT_UNKNOWN",
    );
  });
});
