// Approvals anywhere over HTTP against a real sidecar (the phone-sized browser journey is in
// approval-link-e2e.test.ts): a step-up is told to a loopback webhook receiver with a signed
// notice carrying a one-time link; the link shows that one item to a signed-in approver. The
// attacks: a link without a session, a made-up or malformed token, a forged decision posted
// to the console as if from a notice, a link opened for another decision, a link used after
// the decision, a second answer after the first, a notifier that hangs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPair, type KeyPair } from "../../src/crypto/index.js";
import { signNotice } from "../../src/executors/index.js";
import { signApproval } from "../../src/journal/index.js";
import { until } from "../server/harness.js";
import { ConsoleClient, type ConsoleSidecar, startConsoleSidecar, TOKENS } from "./harness.js";
import { freePort, type Receiver, startReceiver } from "./notify-receiver.js";

const SECRET = "webhook-secret-for-the-test-0123";
let s: ConsoleSidecar;
let receiver: Receiver;
const notices = () => receiver.notices;

beforeAll(async () => {
  receiver = await startReceiver();
  const port = await freePort();
  s = await startConsoleSidecar(
    {},
    {
      port,
      notifications: {
        publicUrl: `http://127.0.0.1:${port}`,
        targets: [{ name: "ops-hook", kind: "webhook", url: receiver.url, secret: SECRET }],
        attempts: 2,
        backoffMs: 20,
        timeoutMs: 300,
      },
    },
  );
});
afterAll(async () => {
  await s?.stop();
  await receiver?.close();
});

const rawX = (k: KeyPair) => k.publicKey.export({ format: "jwk" }).x as string;
const codeOf = (text: string) => /(ERR_[A-Z_]+)/.exec(text)?.[1];

const approvers = new Map<string, Promise<{ c: ConsoleClient; key: KeyPair }>>();
/** The approver's signed-in client with a registered key (one per approver for the file). */
function approver(token: string = TOKENS.approver) {
  let a = approvers.get(token);
  if (a === undefined) {
    a = newApprover(token);
    approvers.set(token, a);
  }
  return a;
}

async function newApprover(token: string) {
  const c = new ConsoleClient(s.url);
  expect(await c.signIn(token)).toBe(303);
  const key = generateKeyPair("ed25519");
  const r = await c.request("/keys", {
    form: { x: rawX(key) },
    headers: { "x-csrf-token": c.csrf ?? "", accept: "application/json" },
  });
  expect(r.status).toBe(200);
  return { c, key };
}

function signedForm(c: ConsoleClient, key: KeyPair, decisionId: string, approverId: string, why: string) {
  const time = new Date().toISOString();
  const sig = signApproval(
    { decision_id: decisionId, action: "approve", approver_id: approverId, justification: why, time },
    key.privateKey,
  );
  return {
    csrf: c.csrf ?? "",
    outcome: "approve",
    justification: why,
    sig: sig.signature,
    key_id: sig.keyId,
    time,
  };
}

/** A blocked call, its pending item and the link its notice carried. */
async function blocked(to: string) {
  const runId = await s.run();
  const call = s.sendNote(runId, { to, text: "quarterly report", count: 1 });
  const p = await until(() => s.server.runtime.approvals.pending().find((x) => x.runId === runId));
  const notice = await until(() => {
    const n = notices().find((x) => x.body.includes(p.decisionId));
    return n;
  });
  const body = JSON.parse(notice.body) as { link: string; decision_id: string };
  return { call, p, notice, link: new URL(body.link).pathname.replace(/^\/console/, "") };
}

/** Ends a test's blocked call with alice's signed denial. */
async function deny(x: { p: { id: string; decisionId: string }; call: Promise<unknown> }) {
  const { c, key } = await approver();
  const why = "cleaning up after the test";
  const time = new Date().toISOString();
  const sig = signApproval(
    { decision_id: x.p.decisionId, action: "deny", approver_id: "alice", justification: why, time },
    key.privateKey,
  );
  await c.request(`/approvals/${x.p.id}`, {
    form: {
      csrf: c.csrf ?? "",
      outcome: "deny",
      justification: why,
      sig: sig.signature,
      key_id: sig.keyId,
      time,
    },
  });
  await x.call;
}

describe("approvals anywhere (HTTP)", () => {
  it("a step-up is told to the webhook with a verifiable signature and a one-time link; the link shows that one item", async () => {
    const { c, key } = await approver();
    const a = await blocked("ops@example.com");
    const ts = String(a.notice.headers["x-warden-timestamp"]);
    expect(a.notice.headers["x-warden-signature"]).toBe(`v1=${signNotice(SECRET, ts, a.notice.body)}`);
    const page = await c.request(a.link);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`id="approval-${a.p.id}"`);
    const why = "approved from the phone link";
    const r = await c.request(`/approvals/${a.p.id}`, {
      form: signedForm(c, key, a.p.decisionId, "alice", why),
    });
    expect(r.status).toBe(200);
    expect(await a.call).toMatchObject({ status: 200, decision: "allow" });
    expect(s.service.hits.some((h) => h.body.includes("ops@example.com"))).toBe(true);
  });

  it("a link used after the decision says who decided; a second answer is refused the same way", async () => {
    const { c, key } = await approver();
    const a = await blocked("second@example.com");
    const why = "first answer from the console";
    await c.request(`/approvals/${a.p.id}`, { form: signedForm(c, key, a.p.decisionId, "alice", why) });
    await a.call;
    const again = await c.request(a.link);
    expect(again.text).toContain("already decided by alice (approve)");
    const b = await approver(TOKENS.approver2);
    const late = await b.c.request(`/approvals/${a.p.id}`, {
      form: signedForm(b.c, b.key, a.p.decisionId, "bob", "a late second answer"),
    });
    expect(late.status).toBe(409);
    expect(late.text).toContain("ERR_APPROVAL_ALREADY_DECIDED");
    expect(late.text).toContain("already decided by alice");
  });

  it("a link without a session, a made-up token and a malformed one grant nothing", async () => {
    const a = await blocked("nosession@example.com");
    const anon = new ConsoleClient(s.url);
    expect((await anon.request(a.link)).status).toBe(401);
    const { c } = await approver();
    const made = await c.request(`/a/${"A".repeat(43)}`);
    expect(made.status).toBe(404);
    expect(codeOf(made.text)).toBe("ERR_CONSOLE_LINK_INVALID");
    expect((await c.request("/a/..%2F..%2Fapprovals")).status).toBe(404);
    expect(s.server.runtime.approvals.pending().some((x) => x.id === a.p.id)).toBe(true);
    await deny(a);
  });

  it("a forged decision posted as if from a notice (no session, no signature) is refused and the call stays blocked", async () => {
    const a = await blocked("forged@example.com");
    const forged = await fetch(`${s.url}/console/approvals/${a.p.id}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "x-warden-signature": "v1=00" },
      body: new URLSearchParams({ outcome: "approve", justification: "looks fine to me" }).toString(),
      redirect: "manual",
    });
    expect(forged.status).toBe(401);
    expect(s.server.runtime.approvals.pending().some((x) => x.id === a.p.id)).toBe(true);
    expect(s.service.hits.some((h) => h.body.includes("forged@example.com"))).toBe(false);
    const { c, key } = await approver();
    // A signature made for another decision does not answer this one.
    const other = await blocked("other@example.com");
    const wrong = await c.request(`/approvals/${a.p.id}`, {
      form: signedForm(c, key, other.p.decisionId, "alice", "signed for the other one"),
    });
    expect(codeOf(wrong.text)).toBe("ERR_APPROVAL_SIGNATURE_INVALID");
    // The link of one decision shows that decision only.
    const page = await c.request(other.link);
    expect(page.text).toContain(`id="approval-${other.p.id}"`);
    expect(page.text).not.toContain(`id="approval-${a.p.id}"`);
    await deny(a);
    await deny(other);
  });

  it("a notifier that hangs blocks nothing: the step-up is queued, approved and executed while deliveries time out", async () => {
    receiver.hang = true;
    try {
      const { c, key } = await approver();
      const a = await blocked("while-hanging@example.com");
      await c.request(`/approvals/${a.p.id}`, {
        form: signedForm(c, key, a.p.decisionId, "alice", "approved while the hook hangs"),
      });
      expect(await a.call).toMatchObject({ decision: "allow" });
      await s.server.runtime.composed.notifications?.notifier.settle();
      const attempts = await s.server.runtime.store.query({ type: "warden.notify.delivery" });
      const mine = attempts.filter((e) => e.body.decision_id === a.p.decisionId);
      expect(mine.map((e) => [e.body.ok, e.body.error])).toEqual([
        [false, "timeout"],
        [false, "timeout"],
      ]);
    } finally {
      receiver.hang = false;
    }
  });

  it("a deferred action is told too; its link shows that item and releasing it there runs the call", async () => {
    const { c } = await approver();
    const runId = await s.run();
    const call = s.archiveNote(runId, "note-42");
    const d = await until(async () =>
      (await s.server.runtime.deferredQueue.list()).find((x) => x.runId === runId),
    );
    const notice = await until(() => notices().find((n) => n.body.includes(d.decisionId)));
    const body = JSON.parse(notice.body) as { kind: string; link: string; tool: string };
    expect(body).toMatchObject({ kind: "deferred", tool: "archive_note" });
    const link = new URL(body.link).pathname.replace(/^\/console/, "");
    const page = await c.request(link);
    expect(page.status).toBe(200);
    expect(page.text).toContain(d.decisionId);
    const r = await c.request(`/approvals/${d.id}`, {
      form: { csrf: c.csrf ?? "", outcome: "approve", justification: "archive it, released from the link" },
    });
    expect(r.status).toBe(200);
    expect(await call).toMatchObject({ status: 200, decision: "allow" });
    expect(s.service.hits.some((h) => h.url.includes("/archive/note-42"))).toBe(true);
  });
});
