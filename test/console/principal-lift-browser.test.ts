// Issue 37 in a real browser (headless Chromium through playwright-core): the denial
// threshold quarantines the agent; the approver sees it on the Quarantine page with its kind
// and reason, signs the lift in the page with the browser's non-extractable Ed25519 key, and
// the agent works again. The quarantined agent's note never reached the service meanwhile.
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "./browser.js";
import { type ConsoleSidecar, startConsoleSidecar, TOKENS } from "./harness.js";

const LONG = 300_000;
const POLL = { timeout: 30_000 };
let s: ConsoleSidecar;
let browser: Browser;

beforeAll(async () => {
  s = await startConsoleSidecar();
  browser = await launchChromium();
}, LONG);

afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

async function decide(runId: string, toolClass: string, action: string) {
  const r = await fetch(`${s.url}/v1/decide`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKENS.agent}`, "content-type": "application/json" },
    body: JSON.stringify({ runId, toolClass, action, parameters: {} }),
  });
  return (await r.json()) as { decision?: string };
}

describe("the principal quarantine lift in Chromium", { timeout: LONG }, () => {
  it("an approver lifts the denial threshold's quarantine with a lift signed in the page", async () => {
    const runId = await s.run();
    for (let i = 0; i < 6; i++) await decide(runId, "shell", "exec");
    const sent = await s.sendNote(await s.run(), { to: "x@example.org", text: "hi", count: 1 });
    expect(sent.decision).toBe("deny");
    expect(s.service.hits).toHaveLength(0);

    const ctx = await browser.newContext();
    try {
      const p = await ctx.newPage();
      p.setDefaultTimeout(60_000);
      await p.goto(`${s.url}/console/sign-in`);
      await p.getByLabel("Approver or auditor token").fill(TOKENS.approver);
      await p.keyboard.press("Enter");
      await p.waitForURL(/\/console\/approvals$/);
      await p.getByRole("link", { name: "Quarantine" }).click();
      await expect
        .poll(() => p.locator("#key-status").textContent(), POLL)
        .toContain("signed in this browser with key");
      await expect.poll(() => p.locator("main").textContent(), POLL).toContain("denial_threshold");
      await p.getByLabel("Reason (required)").fill("denials reviewed, the agent's tool list fixed");
      await p.getByRole("button", { name: "Sign and lift the quarantine" }).click();
      await expect.poll(() => p.locator("main").textContent(), POLL).toContain("is lifted");
    } finally {
      await ctx.close();
    }
    expect(s.server.runtime.sessions.principals.quarantineOf("agent-a")).toBeUndefined();
    const lifted = await s.server.runtime.store.query({ type: "warden.principal.quarantine_lifted" });
    expect(lifted.at(-1)?.body).toMatchObject({
      principal_id: "agent-a",
      approver: "alice",
      via: "presented",
    });
    expect((await decide(await s.run(), "message", "send")).decision).toBe("step_up");
  });
});
