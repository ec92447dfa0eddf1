// Issue 37 across two replicas on one real PostgreSQL (two sidecars in this process, each with
// its own console, journal chain and key store file directory):
//   - a step-up approval signed with a browser key registered via replica A's console, given
//     on A, is honoured by replica B where the call waits (B verifies the signature itself);
//   - that key, revoked via A's console, is refused on A and on B, and never re-registered;
//   - a principal quarantine (denial threshold) lifted via A's console is lifted on B too
//     (B verifies the signed record with the shared browser key), journaled there.
// Before issue 37 browser keys were per replica: B failed closed on A's key, so the approved
// note never reached the service and the lifted agent stayed quarantined on B.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isoTime } from "../../src/contracts/index.js";
import { generateKeyPair, type KeyPair } from "../../src/crypto/index.js";
import { signApproval } from "../../src/journal/index.js";
import { type QuarantineEntry, signPrincipalLift } from "../../src/runtime/index.js";
import { migrate } from "../../src/store-pg/index.js";
import {
  approverWithKey,
  ConsoleClient,
  type ConsoleSidecar,
  POLICY,
  startConsoleSidecar,
  TOKENS,
} from "../console/harness.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { until } from "../server/harness.js";
import { call, codeOf } from "./cluster-helpers.js";
import { freshDatabase, poolOf } from "./helpers.js";

let server: PostgresServer;
let a: ConsoleSidecar;
let b: ConsoleSidecar;
// A short step-up wait: a verdict B refuses times out (deny) instead of holding the test.
const policy = POLICY.replaceAll("timeout: 120s", "timeout: 8s");

beforeAll(async () => {
  server = await startPostgres();
  const url = await freshDatabase(server.connectionString);
  const pool = poolOf(url, 2);
  await migrate(pool);
  await pool.end();
  const replica = (node: string) =>
    startConsoleSidecar(
      {},
      { store: { kind: "postgres", url, node, approvalPollMs: 200, pool: { max: 4 } } },
      {},
      policy,
    );
  a = await replica("a");
  b = await replica("b");
}, 180_000);

afterAll(async () => {
  await b?.stop();
  await a?.stop();
  await server?.stop();
});

const api = (n: ConsoleSidecar, path: string, token: string, body?: unknown) =>
  call(n.url, path, token, body);
const xOf = (k: KeyPair) => k.publicKey.export({ format: "jwk" }).x as string;

/** The pending step-up of `runId`, as every replica lists it. */
async function pendingOf(s: ConsoleSidecar, runId: string): Promise<{ id: string; decisionId: string }> {
  return until(async () => {
    const r = await api(s, "/v1/approvals", TOKENS.approver);
    const items = r.body.pending as { id: string; decisionId: string; runId: string }[];
    return items.find((i) => i.runId === runId);
  }, 20_000);
}

function signed(p: { decisionId: string }, key: KeyPair) {
  const time = isoTime(Date.now());
  const justification = "the recipient is the customer on file";
  const sig = signApproval(
    { decision_id: p.decisionId, action: "approve", approver_id: "alice", justification, time },
    key.privateKey,
  );
  return {
    outcome: "approve",
    justification,
    signature: { decisionId: p.decisionId, keyId: sig.keyId, sig: sig.signature, time },
  };
}

describe("browser approval keys shared by every replica", () => {
  let alice: ConsoleClient;
  const key = generateKeyPair("ed25519");

  it("an approval signed with a key registered via A's console is honoured when the call waits on B", async () => {
    alice = new ConsoleClient(a.url);
    expect(await alice.signIn(TOKENS.approver)).toBe(303);
    const reg = await alice.request("/keys", { form: { csrf: alice.csrf ?? "", x: xOf(key) } });
    expect(reg.status).toBe(200);
    const runId = await b.run();
    const call = b.sendNote(runId, { to: "customer@example.org", text: "your order", count: 1 });
    const p = await pendingOf(a, runId);
    const r = await api(a, `/v1/approvals/${p.id}`, TOKENS.approver, signed(p, key));
    expect(r.status).toBe(200);
    expect(await call).toMatchObject({ decision: "allow" });
    expect(b.service.hits.some((h) => h.body.includes("customer@example.org"))).toBe(true);
  }, 60_000);

  it("a key revoked via A's console is refused on A and on B, and cannot be registered again", async () => {
    const rev = await alice.request("/keys/revoke", { form: { csrf: alice.csrf ?? "", key_id: key.keyId } });
    expect(rev.status).toBe(200);
    // B drops the key from its keyring on the notification (or its poll).
    await until(() =>
      b.server.runtime.approverKeys?.key("alice", key.keyId) === undefined ? true : undefined,
    );
    const before = b.service.hits.length;
    const runId = await b.run();
    const call = b.sendNote(runId, { to: "attacker@example.org", text: "exfil", count: 1 });
    const p = await pendingOf(b, runId);
    for (const replica of [a, b]) {
      const r = await api(replica, `/v1/approvals/${p.id}`, TOKENS.approver, signed(p, key));
      expect(codeOf(r)).toBe("ERR_APPROVAL_SIGNATURE_INVALID");
    }
    const onB = new ConsoleClient(b.url);
    await onB.signIn(TOKENS.approver);
    const again = await onB.request("/keys", { form: { csrf: onB.csrf ?? "", x: xOf(key) } });
    expect(again.status).toBe(400);
    // The call is denied when its wait ends; the note never reaches the service.
    expect((await call).decision).not.toBe("allow");
    expect(b.service.hits.length).toBe(before);
    const audits = await a.server.runtime.store.query({ type: "warden.console.key_revoked" });
    expect(audits.at(-1)?.body).toMatchObject({ principal_id: "alice", outcome: "ok", key_id: key.keyId });
  }, 60_000);
});

describe("a principal quarantine lifted on replica A is lifted on replica B", () => {
  it("the denial threshold's quarantine, lifted via A's console with a browser key, lets the agent work on B", async () => {
    const runA = await a.run();
    for (let i = 0; i < 6; i++)
      await api(a, "/v1/decide", TOKENS.agent, {
        runId: runA,
        toolClass: "shell",
        action: "exec",
        parameters: {},
      });
    // B holds the quarantine too: a fresh run there cannot send.
    const listed = await until(async () => {
      const r = await api(b, "/v1/quarantines", TOKENS.approver);
      return (r.body.quarantines as QuarantineEntry[]).find((q) => q.principalId === "agent-a");
    });
    const runB = await b.run();
    expect(b.server.runtime.sessions.principals.quarantineOf("agent-a")?.type).toBe("denial_threshold");
    const refused = await api(b, "/v1/decide", TOKENS.agent, {
      runId: runB,
      toolClass: "message",
      action: "send",
      parameters: {},
    });
    expect(refused.body.decision).toBe("deny");

    const { c: alice, key } = await approverWithKey(a.url, TOKENS.approver);
    const lift = signPrincipalLift(
      {
        principal: "agent-a",
        quarantine_id: listed.quarantineId ?? "",
        approver_id: "alice",
        issued_at: new Date().toISOString(),
        reason: "the agent's tool list was fixed",
      },
      key,
    );
    const r = await alice.request("/quarantine/lift-principal", {
      form: { csrf: alice.csrf ?? "", lift: JSON.stringify(lift.lift), signature: lift.signature },
    });
    expect(r.status).toBe(200);
    await until(() =>
      b.server.runtime.sessions.principals.quarantineOf("agent-a") === undefined ? true : undefined,
    );
    const works = await api(b, "/v1/decide", TOKENS.agent, {
      runId: await b.run(),
      toolClass: "message",
      action: "send",
      parameters: {},
    });
    expect(works.body.decision).toBe("step_up");
    const onB = await b.server.runtime.store.query({ type: "warden.principal.quarantine_lifted" });
    expect(onB.some((e) => e.body.via === "shared_state" && e.body.approver === "alice")).toBe(true);
  }, 60_000);
});
