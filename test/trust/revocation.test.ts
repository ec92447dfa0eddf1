// APAE's revocation floor in the runtime (issue 19): once an agent's trust falls below 0.2,
// `apae:trust_revoke` voids the capability tokens and delegation chains it was granted up
// to then. The quarantine floor is set lower here so the agent is revoked but not
// quarantined: the refusals below are the revocation's, not a quarantine's.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { generateKeyPair } from "../../src/crypto/index.js";
import { issueLink } from "../../src/identity/delegation/index.js";
import { composeRuntime, type Runtime } from "../../src/runtime/index.js";
import { TRUST_EMITTED_EVENT } from "../../src/trust/index.js";

const POLICY = `
rules:
  - { id: post-with-cap, name: post, priority: 100, match: { toolClass: http, action: post, capability: true }, decision: allow, reason: granted }
  - { id: get, name: get, priority: 100, match: { toolClass: http, action: get }, decision: allow, reason: open }
  - { id: no-shell, name: no-shell, priority: 200, match: { toolClass: shell }, decision: deny, reason: no shell }
`;
const GRANT = { toolClass: "http", action: "post", maxUses: 10, ttlMs: 3_600_000 };
const root = generateKeyPair("ed25519");
const workerKey = generateKeyPair("ed25519");

const open: Runtime[] = [];
afterEach(async () => {
  for (const rt of open.splice(0)) await rt.close();
});

async function runtime(apae: boolean, reuse?: { dir: string; signer: ReturnType<typeof generateKeyPair> }) {
  const dir = reuse?.dir ?? mkdtempSync(join(tmpdir(), "warden-revoke-"));
  const signer = reuse?.signer ?? generateKeyPair("ed25519");
  writeFileSync(join(dir, "policy.yaml"), POLICY);
  let now = Date.now();
  const rt = await composeRuntime(
    {
      policy: [join(dir, "policy.yaml")],
      journal: { path: join(dir, "journal.db"), signer },
      gate: {
        principals: {
          "agent-1": { id: "agent-1", roles: ["agent"] },
          "agent-2": { id: "agent-2", roles: ["agent"] },
        },
        context: { quarantine: { denialThreshold: 100 } },
        requireContract: false,
      },
      delegation: { roots: [root.publicKey] },
      ...(apae ? { apae: { settings: { quarantine_floor: 0.05 } } } : {}),
    },
    { clock: () => now },
  );
  open.push(rt);
  return { rt, dir, signer, advance: (ms: number) => (now += ms) };
}

const call = (
  principalId: string,
  runId: string,
  toolClass: string,
  action: string,
  capability?: string,
) => ({
  principalId,
  runId,
  toolClass,
  action,
  parameters: toolClass === "http" ? { url: "https://api.example.com/x" } : {},
  ...(capability !== undefined ? { capability } : {}),
});

/** Three policy denials: 0.5 → 0.32 → 0.2048 → 0.131072, below the revocation floor. */
async function violate(rt: Runtime, principalId: string): Promise<void> {
  for (let i = 0; i < 3; i++) {
    const run = await rt.startRun(principalId);
    expect((await rt.gate.authorize(call(principalId, run.runId, "shell", "exec"))).decision).toBe("deny");
  }
  await rt.apae?.settled();
}

/**
 * The chains are issued a minute before the runtime's (frozen) clock starts, so "issued before
 * the revocation" does not depend on the wall clock crossing a second between the runtime's
 * start and the chain's issue (it did under load: the test failed intermittently).
 */
const chainFor = (principal: string) => [
  issueLink({
    iat: Math.floor(Date.now() / 1000) - 60,
    delegator: { id: "operator", key: root },
    delegate: { id: principal, publicKey: workerKey.publicKey },
    grant: { tools: ["http:*"], dataClasses: ["public"], expiresAt: Math.floor(Date.now() / 1000) + 7200 },
  }),
];

describe("the APAE revocation floor revokes tokens and delegations", () => {
  it("an agent whose trust falls below 0.2 can no longer use a capability token granted before", async () => {
    const { rt, advance } = await runtime(true);
    const run = await rt.startRun("agent-1");
    const cap = await rt.grant(run.runId, GRANT, "operator-1");
    expect((await rt.gate.authorize(call("agent-1", run.runId, "http", "post", cap.token))).decision).toBe(
      "allow",
    );
    const other = await rt.startRun("agent-2");
    const bystander = await rt.grant(other.runId, GRANT);

    await violate(rt, "agent-1");
    expect((await rt.store.query({ type: TRUST_EMITTED_EVENT })).map((e) => e.body.exec_act)).toEqual([
      "apae:trust_revoke",
    ]);
    expect(rt.sessions.principals.quarantineOf("agent-1")).toBeUndefined();
    advance(1000);
    const replay = await rt.gate.authorize(call("agent-1", run.runId, "http", "post", cap.token));
    expect(replay).toMatchObject({ decision: "deny", reasonCodes: ["ERR_CAPABILITY_REVOKED"] });
    // Another principal's token is untouched.
    const b = await rt.gate.authorize(call("agent-2", other.runId, "http", "post", bystander.token));
    expect(b.decision).toBe("allow");

    // An operator's re-issue after the revocation is a new grant and is honoured.
    advance(1000);
    const fresh = await rt.grant(run.runId, GRANT, "operator-1");
    expect((await rt.gate.authorize(call("agent-1", run.runId, "http", "post", fresh.token))).decision).toBe(
      "allow",
    );
  });

  it("a revoked agent cannot call in its delegated run, nor in a new run on the same chain", async () => {
    const { rt, advance } = await runtime(true);
    const chain = chainFor("agent-1");
    const run = await rt.startDelegatedRun("agent-1", { chain });
    expect((await rt.gate.authorize(call("agent-1", run.runId, "http", "get"))).decision).toBe("allow");

    // The chain's issue time is the wall clock (whole seconds); the runtime's clock was read
    // before composeRuntime: move it past the chain's second so the revocation follows it.
    advance(2000);
    await violate(rt, "agent-1");
    advance(1000);
    const after = await rt.gate.authorize(call("agent-1", run.runId, "http", "get"));
    expect(after).toMatchObject({ decision: "deny", reasonCodes: ["ERR_DELEGATION_CEILING"] });
    expect(after.matchedRules[0]?.source).toBe("builtin");
    const again = await rt.startDelegatedRun("agent-1", { chain });
    const rerun = await rt.gate.authorize(call("agent-1", again.runId, "http", "get"));
    expect(rerun).toMatchObject({ decision: "deny", reasonCodes: ["ERR_DELEGATION_CEILING"] });
  });

  it("a restart does not forget the revocation: the old chain still cannot act", async () => {
    const first = await runtime(true);
    const chain = chainFor("agent-1");
    first.advance(2000); // the revocation follows the chain's (whole-second, wall-clock) issue time
    await violate(first.rt, "agent-1");
    await first.rt.close();
    const { rt } = await runtime(true, first);
    const run = await rt.startDelegatedRun("agent-1", { chain });
    const out = await rt.gate.authorize(call("agent-1", run.runId, "http", "get"));
    expect(out).toMatchObject({ decision: "deny", reasonCodes: ["ERR_DELEGATION_CEILING"] });
    // Another principal's chain of the same age is untouched.
    const other = await rt.startDelegatedRun("agent-2", { chain: chainFor("agent-2") });
    expect((await rt.gate.authorize(call("agent-2", other.runId, "http", "get"))).decision).toBe("allow");
  });

  it("without a fall below the floor, or without apae, tokens and delegated runs keep working", async () => {
    for (const apae of [true, false]) {
      const { rt } = await runtime(apae);
      const run = await rt.startRun("agent-1");
      const cap = await rt.grant(run.runId, GRANT);
      const deleg = await rt.startDelegatedRun("agent-1", { chain: chainFor("agent-1") });
      // Two denials: 0.2048, still above the floor.
      for (let i = 0; i < 2; i++) await rt.gate.authorize(call("agent-1", run.runId, "shell", "exec"));
      await rt.apae?.settled();
      expect((await rt.gate.authorize(call("agent-1", run.runId, "http", "post", cap.token))).decision).toBe(
        "allow",
      );
      expect((await rt.gate.authorize(call("agent-1", deleg.runId, "http", "get"))).decision).toBe("allow");
    }
  });
});
