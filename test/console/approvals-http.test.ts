// The console's approval path over HTTP against a real sidecar (the browser is driven in
// console-e2e.test.ts): a blocked agent call, a browser-style key registration, a signed
// verdict, and the attacks on that path — unsigned, another approver's key, a modify
// outside the contract, an auditor deciding — all refused and journaled.

import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BrowserKeyStore, browserKeyPath } from "../../src/console/index.js";
import { sha256Of } from "../../src/contracts/index.js";
import { generateKeyPair, type KeyPair } from "../../src/crypto/index.js";
import { ApproverKeyring, signApproval, verifyApprovalSignatures } from "../../src/journal/index.js";
import { until } from "../server/harness.js";
import { ConsoleClient, type ConsoleSidecar, startConsoleSidecar, TOKENS } from "./harness.js";

let s: ConsoleSidecar;
beforeAll(async () => {
  s = await startConsoleSidecar();
});
afterAll(async () => {
  await s.stop();
});

const rawX = (k: KeyPair) => k.publicKey.export({ format: "jwk" }).x as string;
const codeOf = (text: string) => /<code>(ERR_[A-Z_]+)<\/code>/.exec(text)?.[1];

async function pending(runId: string) {
  return until(() => s.server.runtime.approvals.pending().find((p) => p.runId === runId));
}

async function approverWithKey(token: string = TOKENS.approver) {
  const c = new ConsoleClient(s.url);
  expect(await c.signIn(token)).toBe(303);
  const key = generateKeyPair("ed25519");
  const r = await c.request("/keys", {
    form: { x: rawX(key) },
    headers: { "x-csrf-token": c.csrf ?? "", accept: "application/json" },
  });
  expect(r.status).toBe(200);
  expect(JSON.parse(r.text)).toMatchObject({ keyId: key.keyId, registered: true });
  return { c, key };
}

function signed(
  key: KeyPair,
  p: { decisionId: string },
  action: "approve" | "deny" | "modify",
  justification: string,
  approver = "alice",
  parameters?: Record<string, unknown>,
) {
  const time = new Date().toISOString();
  const sig = signApproval(
    {
      decision_id: p.decisionId,
      action,
      approver_id: approver,
      justification,
      time,
      ...(parameters !== undefined ? { parameters_hash: sha256Of(parameters) } : {}),
    },
    key.privateKey,
  );
  return { sig: sig.signature, key_id: sig.keyId, time };
}

describe("approving in the console", () => {
  it("an approver signs an approval with a registered browser key and the blocked agent call completes", async () => {
    const { c, key } = await approverWithKey();
    const runId = await s.run();
    const call = s.sendNote(runId, { to: "ops@example.com", text: "hello", count: 1 });
    const p = await pending(runId);
    const page = await c.request("/approvals");
    expect(page.status).toBe(200);
    expect(page.text).toContain(`id="approval-${p.id}"`);
    const why = "vendor confirmed by phone";
    const r = await c.request(`/approvals/${p.id}`, {
      form: { csrf: c.csrf ?? "", outcome: "approve", justification: why, ...signed(key, p, "approve", why) },
    });
    expect(r.status).toBe(200);
    expect(r.text).toContain("Approved");
    const answer = await call;
    expect(answer).toMatchObject({ status: 200, decision: "allow" });
    const hitl = await s.server.runtime.store.query({ type: "dare.hitl.decision" });
    expect(JSON.stringify(hitl.at(-1)?.body)).toContain(key.keyId);
    const audits = await s.server.runtime.store.query({ type: "warden.console.approval" });
    expect(audits.at(-1)?.body).toMatchObject({
      principal_id: "alice",
      outcome: "ok",
      action: "approve",
      signed: true,
    });
    const reg = await s.server.runtime.store.query({ type: "warden.console.key_registered" });
    expect(reg.some((e) => e.body.key_id === key.keyId && e.body.principal_id === "alice")).toBe(true);
    // Offline: the persisted browser keys verify the journal's approver-signed records.
    const ring = new ApproverKeyring();
    BrowserKeyStore.open(browserKeyPath(join(s.dir, "journal.db")), 4).loadInto(ring);
    const report = await verifyApprovalSignatures(s.server.runtime.store.entries(), ring);
    expect(report).toMatchObject({ ok: true, failures: [] });
    expect(report.checked).toBeGreaterThanOrEqual(1);
  });

  it("an unsigned decision is refused (ERR_APPROVAL_UNSIGNED) and the item stays pending", async () => {
    const c = new ConsoleClient(s.url);
    await c.signIn(TOKENS.approver);
    const runId = await s.run();
    const call = s.sendNote(runId, { to: "a@example.com", text: "x", count: 1 });
    const p = await pending(runId);
    const r = await c.request(`/approvals/${p.id}`, {
      form: { csrf: c.csrf ?? "", outcome: "approve", justification: "looks fine to me" },
    });
    expect(r.status).toBe(400);
    expect(codeOf(r.text)).toBe("ERR_APPROVAL_UNSIGNED");
    expect(s.server.runtime.approvals.pending().some((x) => x.id === p.id)).toBe(true);
    const refused = await s.server.runtime.store.query({ type: "warden.console.approval" });
    expect(refused.at(-1)?.body).toMatchObject({ outcome: "refused", code: "ERR_APPROVAL_UNSIGNED" });
    // Clean up: deny it properly.
    const { key, c: c2 } = await approverWithKey();
    const why = "cleaning up the test item";
    await c2.request(`/approvals/${p.id}`, {
      form: { csrf: c2.csrf ?? "", outcome: "deny", justification: why, ...signed(key, p, "deny", why) },
    });
    expect(await call).toMatchObject({ decision: "deny" });
  });

  it("a decision signed with another approver's registered key is refused (ERR_APPROVAL_SIGNATURE_INVALID)", async () => {
    const bob = await approverWithKey(TOKENS.approver2);
    const alice = new ConsoleClient(s.url);
    await alice.signIn(TOKENS.approver);
    const runId = await s.run();
    const call = s.sendNote(runId, { to: "a@example.com", text: "x", count: 1 });
    const p = await pending(runId);
    const why = "approving with bob's key";
    const r = await alice.request(`/approvals/${p.id}`, {
      form: {
        csrf: alice.csrf ?? "",
        outcome: "approve",
        justification: why,
        ...signed(bob.key, p, "approve", why),
      },
    });
    expect(r.status).toBe(403);
    expect(codeOf(r.text)).toBe("ERR_APPROVAL_SIGNATURE_INVALID");
    const denyWhy = "denied by bob himself";
    await bob.c.request(`/approvals/${p.id}`, {
      form: {
        csrf: bob.c.csrf ?? "",
        outcome: "deny",
        justification: denyWhy,
        ...signed(bob.key, p, "deny", denyWhy, "bob"),
      },
    });
    expect(await call).toMatchObject({ decision: "deny" });
  });

  it("a modify outside the contract's types is refused before the queue sees it; a valid one runs the new parameters", async () => {
    const { c, key } = await approverWithKey();
    const runId = await s.run();
    const call = s.sendNote(runId, { to: "a@example.com", text: "x", count: 9 });
    const p = await pending(runId);
    const bad = { to: "a@example.com", text: "x", count: 99 };
    const why = "lowering the count";
    const r1 = await c.request(`/approvals/${p.id}`, {
      form: {
        csrf: c.csrf ?? "",
        outcome: "modify",
        justification: why,
        parameters: JSON.stringify(bad),
        ...signed(key, p, "modify", why, "alice", bad),
      },
    });
    expect(r1.status).toBe(400);
    expect(codeOf(r1.text)).toBe("ERR_CONSOLE_FORM_INVALID");
    expect(s.server.runtime.approvals.pending().some((x) => x.id === p.id)).toBe(true);
    const good = { to: "a@example.com", text: "x", count: 2 };
    const r2 = await c.request(`/approvals/${p.id}`, {
      form: {
        csrf: c.csrf ?? "",
        outcome: "modify",
        justification: why,
        parameters: JSON.stringify(good),
        ...signed(key, p, "modify", why, "alice", good),
      },
    });
    expect(r2.status).toBe(200);
    expect(r2.text).toContain('class="changed"');
    expect(await call).toMatchObject({ decision: "modify" });
    expect(JSON.parse(s.service.hits.at(-1)?.body ?? "{}")).toMatchObject({ count: 2 });
  });

  it("an auditor cannot see the queue nor decide (ERR_CONSOLE_FORBIDDEN)", async () => {
    const c = new ConsoleClient(s.url);
    expect(await c.signIn(TOKENS.auditor)).toBe(303);
    expect((await c.request("/approvals")).status).toBe(403);
    const r = await c.request("/approvals/whatever", {
      form: { csrf: c.csrf ?? "", outcome: "approve", justification: "auditors may not" },
    });
    expect(r.status).toBe(403);
    expect(codeOf(r.text)).toBe("ERR_CONSOLE_FORBIDDEN");
    const k = await c.request("/keys", { form: { csrf: c.csrf ?? "", x: rawX(generateKeyPair("ed25519")) } });
    expect(k.status).toBe(403);
  });

  it("a key that is not an Ed25519 public key is refused (ERR_CONSOLE_KEY_INVALID)", async () => {
    const c = new ConsoleClient(s.url);
    await c.signIn(TOKENS.approver);
    // Empty, not base64url, a small-order point (all zeros, and the identity), too long.
    const identity = Buffer.alloc(32);
    identity[0] = 1;
    for (const x of ["", "not-a-key", "A".repeat(43), identity.toString("base64url"), "A".repeat(44)]) {
      const r = await c.request("/keys", {
        form: { csrf: c.csrf ?? "", x },
        headers: { accept: "application/json" },
      });
      expect(r.status).toBe(400);
      expect(JSON.parse(r.text).error.code).toBe("ERR_CONSOLE_KEY_INVALID");
    }
  });
});

describe("deferred actions in the console", () => {
  it("an approver releases a deferred action from the queue and the blocked call runs; a deny refuses it", async () => {
    const c = new ConsoleClient(s.url);
    await c.signIn(TOKENS.approver);
    const released = s.archiveNote(await s.run(), "note-1");
    const d1 = await until(() => s.server.runtime.gate.deferQueue.list()[0]);
    const page = await c.request("/approvals");
    expect(page.text).toContain(`id="approval-${d1.id}"`);
    const r1 = await c.request(`/approvals/${d1.id}`, {
      form: { csrf: c.csrf ?? "", outcome: "approve", justification: "archiving is fine now" },
    });
    expect(r1.status).toBe(200);
    expect(await released).toMatchObject({ status: 200, decision: "allow" });
    expect(s.service.hits.at(-1)?.url).toBe("/archive/note-1");

    const refused = s.archiveNote(await s.run(), "note-2");
    const d2 = await until(() => s.server.runtime.gate.deferQueue.list()[0]);
    const modify = await c.request(`/approvals/${d2.id}`, {
      form: { csrf: c.csrf ?? "", outcome: "modify", justification: "cannot modify a deferral" },
    });
    expect(codeOf(modify.text)).toBe("ERR_CONSOLE_FORM_INVALID");
    await c.request(`/approvals/${d2.id}`, {
      form: { csrf: c.csrf ?? "", outcome: "deny", justification: "not archiving this one" },
    });
    expect(await refused).toMatchObject({ decision: "deny" });
    const audits = await s.server.runtime.store.query({ type: "warden.console.approval" });
    expect(audits.filter((e) => e.body.kind === "defer").map((e) => e.body.action)).toEqual([
      "approve",
      "deny",
    ]);
  });
});
