// The signed early quarantine lift in the console: an agent APAE trust quarantined after
// repeated policy violations is listed for approvers; a lift signed with the approver's
// registered browser key ends it (journaled, the agent can act again); a lift signed with
// another approver's key, an unsigned one, or one for an old quarantine episode is refused.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KeyPair } from "../../src/crypto/index.js";
import { signLift } from "../../src/trust/index.js";
import {
  approverWithKey,
  ConsoleClient,
  type ConsoleSidecar,
  quarantineAgent,
  startConsoleSidecar,
  TOKENS,
} from "./harness.js";

let s: ConsoleSidecar;
beforeAll(async () => {
  s = await startConsoleSidecar({}, { apae: { settings: { alpha: 0.01 } } });
});
afterAll(async () => {
  await s.stop();
});

const codeOf = (text: string) => /<code>(ERR_[A-Z_]+)<\/code>/.exec(text)?.[1];

const approverKey = (token: string) => approverWithKey(s.url, token);

function lift(key: KeyPair, count: number, reason = "reviewed the denials, agent fixed") {
  const view = s.server.runtime.apae?.viewOf("agent-a");
  const signed = signLift(
    {
      scope: "apae:quarantine_lift",
      truster: view?.truster ?? "",
      subject: "agent-a",
      quarantine_count: count,
      issued_at: new Date().toISOString(),
      reason,
    },
    key,
  );
  return { lift: JSON.stringify(signed.lift), signature: signed.signature };
}

describe("the signed quarantine lift", () => {
  it("an approver lifts a trust quarantine with a lift signed by their browser key; another approver's key or no signature is refused", async () => {
    await quarantineAgent(s, TOKENS.agent);
    const alice = await approverKey(TOKENS.approver);
    const bob = await approverKey(TOKENS.approver2);
    const page = await alice.c.request("/quarantine");
    expect(page.status).toBe(200);
    expect(page.text).toContain('data-subject="agent-a"');
    const count = s.server.runtime.apae?.viewOf("agent-a").quarantineCount ?? 0;

    const withBobsKey = await alice.c.request("/quarantine/lift", {
      form: { csrf: alice.c.csrf ?? "", ...lift(bob.key, count) },
    });
    expect(codeOf(withBobsKey.text)).toBe("ERR_TRUST_LIFT_APPROVER_UNKNOWN");
    const unsigned = await alice.c.request("/quarantine/lift", {
      form: { csrf: alice.c.csrf ?? "", lift: lift(alice.key, count).lift, signature: "" },
    });
    expect(codeOf(unsigned.text)).toMatch(/^ERR_TRUST_LIFT_/);
    const stale = await alice.c.request("/quarantine/lift", {
      form: { csrf: alice.c.csrf ?? "", ...lift(alice.key, count + 1) },
    });
    expect(codeOf(stale.text)).toBe("ERR_TRUST_LIFT_STALE");
    expect(s.server.runtime.apae?.viewOf("agent-a").status).toBe("quarantined");

    const ok = await alice.c.request("/quarantine/lift", {
      form: { csrf: alice.c.csrf ?? "", ...lift(alice.key, count) },
    });
    expect(ok.status).toBe(200);
    expect(ok.text).toContain("is lifted");
    expect(s.server.runtime.apae?.viewOf("agent-a").status).not.toBe("quarantined");
    const audits = await s.server.runtime.store.query({ type: "warden.console.quarantine_lift" });
    expect(audits.map((e) => e.body.outcome)).toEqual(["refused", "refused", "refused", "ok"]);
    expect(audits.at(-1)?.body).toMatchObject({
      principal_id: "alice",
      subject: "agent-a",
      key_id: alice.key.keyId,
    });
    // The agent can be decided on again (not refused as quarantined).
    const r = await fetch(`${s.url}/v1/decide`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKENS.agent}`, "content-type": "application/json" },
      body: JSON.stringify({ runId: await s.run(), toolClass: "message", action: "send", parameters: {} }),
    });
    expect(((await r.json()) as { decision?: string }).decision).toBe("step_up");
  });

  it("the lift needs the approver role and the CSRF token", async () => {
    const auditor = new ConsoleClient(s.url);
    await auditor.signIn(TOKENS.auditor);
    expect((await auditor.request("/quarantine")).status).toBe(403);
    const alice = new ConsoleClient(s.url);
    await alice.signIn(TOKENS.approver);
    const r = await alice.request("/quarantine/lift", { form: { lift: "{}", signature: "x" } });
    expect(codeOf(r.text)).toBe("ERR_CONSOLE_CSRF");
  });
});
