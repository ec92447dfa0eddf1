// Issue 37: a quarantine the denial threshold (or a behavioural rule) set on a principal is
// listed for approvers and lifted only by an approver's signed record — never by the agent
// itself. The attacks: the agent lifts its own quarantine with its own credential, with a key
// of its own, by opening a new run, by replaying an old lift, or with a lift for another
// principal; none works and its quarantined sends never reach the service. A genuine lift is
// journaled (who, what, why) and the principal works again.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPair, type KeyPair } from "../../src/crypto/index.js";
import { type QuarantineEntry, signPrincipalLift } from "../../src/runtime/index.js";
import { call, codeOf } from "../store-pg/cluster-helpers.js";
import {
  approverWithKey,
  type ConsoleClient,
  type ConsoleSidecar,
  startConsoleSidecar,
  TOKENS,
} from "./harness.js";

let s: ConsoleSidecar;
beforeAll(async () => {
  s = await startConsoleSidecar();
});
afterAll(async () => {
  await s.stop();
});

const api = (path: string, token: string, body?: unknown) => call(s.url, path, token, body);

/** Denied shell calls until the denial threshold quarantines agent-a. */
async function trip(): Promise<void> {
  const runId = await s.run();
  for (let i = 0; i < 6; i++)
    await api("/v1/decide", TOKENS.agent, { runId, toolClass: "shell", action: "exec", parameters: {} });
}

async function listed(): Promise<QuarantineEntry[]> {
  const r = await api("/v1/quarantines", TOKENS.approver);
  expect(r.status).toBe(200);
  return r.body.quarantines as QuarantineEntry[];
}

const approverKey = (token: string) => approverWithKey(s.url, token);

const liftOf = (q: QuarantineEntry, approver: string, key: KeyPair, principal = q.principalId) =>
  signPrincipalLift(
    {
      principal,
      quarantine_id: q.quarantineId ?? "",
      approver_id: approver,
      issued_at: new Date().toISOString(),
      reason: "denials reviewed with the agent's owner",
    },
    key,
  );

/** A quarantined principal's note never reaches the service. */
async function sendIsRefused(): Promise<void> {
  const before = s.service.hits.length;
  const r = await s.sendNote(await s.run(), { to: "x@example.org", text: "hi", count: 1 });
  expect(r.decision).not.toBe("allow");
  expect(s.service.hits.length).toBe(before);
}

describe("principal quarantines: listed, and lifted only by an approver's signed record", () => {
  let alice: { c: ConsoleClient; key: KeyPair };
  let bob: { c: ConsoleClient; key: KeyPair };
  let q: QuarantineEntry;

  it("the denial threshold's quarantine is listed with its kind, run, reason and matched calls (API and page)", async () => {
    await trip();
    const all = await listed();
    const found = all.find((x) => x.principalId === "agent-a");
    expect(found).toMatchObject({ kind: "principal", trigger: "denial_threshold" });
    q = found as QuarantineEntry;
    expect(q.runId).toMatch(/./);
    expect(q.matched.some((m) => m.toolClass === "shell" && m.decision === "deny")).toBe(true);
    alice = await approverKey(TOKENS.approver);
    bob = await approverKey(TOKENS.approver2);
    const page = await alice.c.request("/quarantine");
    expect(page.status).toBe(200);
    expect(page.text).toContain('data-principal="agent-a"');
    expect(page.text).toContain("denial_threshold");
  });

  it("the agent cannot list or lift with its own credential, nor escape by opening a new run", async () => {
    expect((await api("/v1/quarantines", TOKENS.agent)).status).toBe(403);
    const own = generateKeyPair("ed25519");
    const r = await api("/v1/quarantines/lift", TOKENS.agent, liftOf(q, "agent-a", own));
    expect(r.status).toBe(403);
    await sendIsRefused();
  });

  it("a lift signed with a key of the agent's, or another approver's key, or presented by another approver is refused", async () => {
    const own = generateKeyPair("ed25519");
    expect(codeOf(await api("/v1/quarantines/lift", TOKENS.approver, liftOf(q, "alice", own)))).toBe(
      "ERR_TRUST_LIFT_APPROVER_UNKNOWN",
    );
    expect(codeOf(await api("/v1/quarantines/lift", TOKENS.approver, liftOf(q, "alice", bob.key)))).toBe(
      "ERR_TRUST_LIFT_APPROVER_UNKNOWN",
    );
    // Bob's own genuine record, presented by alice: a record is not a bearer token.
    expect(codeOf(await api("/v1/quarantines/lift", TOKENS.approver, liftOf(q, "bob", bob.key)))).toBe(
      "ERR_TRUST_LIFT_APPROVER_UNKNOWN",
    );
    const unsigned = { lift: liftOf(q, "alice", alice.key).lift };
    expect(codeOf(await api("/v1/quarantines/lift", TOKENS.approver, unsigned))).toBe(
      "ERR_TRUST_LIFT_UNSIGNED",
    );
    // An approval for another principal does not lift this one; re-addressing it breaks the signature.
    const other = liftOf(q, "alice", alice.key, "agent-b");
    expect(codeOf(await api("/v1/quarantines/lift", TOKENS.approver, other))).toBe(
      "ERR_TRUST_NOT_QUARANTINED",
    );
    const readdressed = { ...other, lift: { ...other.lift, principal: "agent-a" } };
    expect(codeOf(await api("/v1/quarantines/lift", TOKENS.approver, readdressed))).toBe(
      "ERR_TRUST_LIFT_SIGNATURE_INVALID",
    );
    await sendIsRefused();
    expect((await listed()).some((x) => x.principalId === "agent-a")).toBe(true);
  });

  it("the approver's signed lift in the console ends it, journaled with who, what and why; the agent works again", async () => {
    const signed = liftOf(q, "alice", alice.key);
    const r = await alice.c.request("/quarantine/lift-principal", {
      form: { csrf: alice.c.csrf ?? "", lift: JSON.stringify(signed.lift), signature: signed.signature },
    });
    expect(r.status).toBe(200);
    expect(r.text).toContain("is lifted");
    expect((await listed()).some((x) => x.principalId === "agent-a")).toBe(false);
    const lifted = await s.server.runtime.store.query({ type: "warden.principal.quarantine_lifted" });
    expect(lifted.at(-1)?.body).toMatchObject({
      principal_id: "agent-a",
      quarantine_id: q.quarantineId,
      trigger: "denial_threshold",
      approver: "alice",
      approver_key_id: alice.key.keyId,
      reason: "denials reviewed with the agent's owner",
      via: "presented",
    });
    const audits = await s.server.runtime.store.query({ type: "warden.console.quarantine_lift" });
    expect(audits.at(-1)?.body).toMatchObject({ principal_id: "alice", outcome: "ok", subject: "agent-a" });
    const d = await api("/v1/decide", TOKENS.agent, {
      runId: await s.run(),
      toolClass: "message",
      action: "send",
      parameters: {},
    });
    expect(d.body.decision).toBe("step_up");
  });

  it("the same lift replayed after the agent is quarantined again is stale: the new quarantine holds", async () => {
    const old = liftOf(q, "alice", alice.key);
    await trip();
    const again = (await listed()).find((x) => x.principalId === "agent-a");
    expect(again?.quarantineId).not.toBe(q.quarantineId);
    expect(codeOf(await api("/v1/quarantines/lift", TOKENS.approver, old))).toBe("ERR_TRUST_LIFT_STALE");
    await sendIsRefused();
    // The API lift with the new id works.
    const ok = await api(
      "/v1/quarantines/lift",
      TOKENS.approver,
      liftOf(again as QuarantineEntry, "alice", alice.key),
    );
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ principalId: "agent-a", trigger: "denial_threshold", approver: "alice" });
  });
});
