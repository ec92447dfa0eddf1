// The per-host engine map of the AARTS HTTP transport is bounded (hooks.maxEngines): a host
// beyond the bound is refused with a coded 503, the hosts already served keep their engine
// (and its protective state), and a flood of principals does not grow the map.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPair } from "../../src/crypto/index.js";
import { createEngine, hostToolsPolicyPath } from "../../src/hooks/index.js";
import { composeRuntime, type Runtime } from "../../src/runtime/index.js";
import { hashToken } from "../../src/server/index.js";
import { EngineRegistry } from "../../src/server/routes/hooks-engines.js";
import { tool } from "../hooks/events.js";
import { type Sidecar, startTestSidecar, TOKENS } from "./harness.js";

const HOSTS = ["token-host-one-0123456789", "token-host-two-0123456789", "token-host-three-012345678"];

let s: Sidecar;
beforeAll(async () => {
  s = await startTestSidecar({
    requireContract: false,
    config: {
      policies: [hostToolsPolicyPath()],
      hooks: { maxEngines: 2 },
      gate: {
        tenant: "test",
        environment: "test",
        requireContract: false,
        principals: [0, 1, 2].map((i) => ({ id: `host-${i}`, roles: ["host"] })),
      },
      auth: {
        principals: HOSTS.map((t, i) => ({ id: `host-${i}`, tokenSha256: hashToken(t) })),
        approvers: [{ id: "alice", roles: ["approver"], tokenSha256: hashToken(TOKENS.approver) }],
      },
    },
  });
});
afterAll(() => s.stop());

const handshake = (token: string) => s.call("/v1/hooks/handshake", { token, body: { aarts_version: "1" } });
const code = (r: { body: Record<string, unknown> }) => (r.body.error as { code?: string } | undefined)?.code;

describe("the sidecar's bound on per-host engines", () => {
  it("a third host beyond maxEngines 2 is refused with 503 ERR_HOOK_ENGINE_LIMIT; the first two keep working", async () => {
    expect((await handshake(HOSTS[0] as string)).status).toBe(200);
    expect((await handshake(HOSTS[1] as string)).status).toBe(200);
    for (let i = 0; i < 20; i++) {
      const r = await handshake(HOSTS[2] as string);
      expect(r.status).toBe(503);
      expect(code(r)).toBe("ERR_HOOK_ENGINE_LIMIT");
    }
    const third = await s.call("/v1/hooks/events", {
      token: HOSTS[2] as string,
      body: tool("shell", { command: "ls" }, "Bash"),
    });
    expect(third.status).toBe(503);
    const first = await s.call("/v1/hooks/events", {
      token: HOSTS[0] as string,
      body: tool("shell", { command: "rm -rf /" }, "Bash"),
    });
    expect(first.status).toBe(200);
    expect(first.body.decision).toBe("deny");
  });
});

describe("EngineRegistry", () => {
  let runtime: Runtime;
  beforeAll(async () => {
    runtime = await composeRuntime({
      policy: [hostToolsPolicyPath()],
      journal: { path: ":memory:", signer: generateKeyPair("ed25519") },
      gate: { principals: (id) => ({ id, roles: [] }), runs: "runtime" },
    });
  });
  afterAll(() => runtime.close());

  it("a flood of 500 distinct host principals leaves at most max engines in memory", async () => {
    let created = 0;
    const reg = new EngineRegistry({
      max: 8,
      create: (principal) => {
        created++;
        return createEngine({ runtime, transport: "http", principal });
      },
    });
    let refused = 0;
    for (let i = 0; i < 500; i++) {
      try {
        await reg.get(`flood-${i}`);
      } catch (err) {
        expect((err as { code?: string }).code).toBe("ERR_HOOK_ENGINE_LIMIT");
        refused++;
      }
      expect(reg.size).toBeLessThanOrEqual(8);
    }
    expect(created).toBe(8);
    expect(refused).toBe(492);
    // A principal already served gets the same engine back, not a new one.
    const a = await reg.get("flood-3");
    expect(await reg.get("flood-3")).toBe(a);
    expect(created).toBe(8);
    await reg.close();
    expect(reg.size).toBe(0);
  });

  it("an engine whose creation failed frees its slot", async () => {
    let fail = true;
    const reg = new EngineRegistry({
      max: 1,
      create: (principal) =>
        fail ? Promise.reject(new Error("boom")) : createEngine({ runtime, transport: "http", principal }),
    });
    await expect(reg.get("h")).rejects.toThrow("boom");
    expect(reg.size).toBe(0);
    fail = false;
    await expect(reg.get("other")).resolves.toBeDefined();
    expect(reg.size).toBe(1);
  });
});
