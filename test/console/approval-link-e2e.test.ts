// Approvals anywhere, as an approver on a phone meets it: a real sidecar (console on,
// notifications to a loopback webhook receiver), an agent call that blocks on step-up, the
// signed notice arriving at the receiver, its link followed in headless Chromium with a
// phone-sized viewport (390×844, touch), sign-in, a browser-signed approval, and the blocked
// agent call completing. The page fits the screen (no sideways scrolling), and the link used
// again says who decided. A `notify` obligation is served by the same notifier, so a policy
// carrying it runs in the sidecar.
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signNotice } from "../../src/executors/index.js";
import { until } from "../server/harness.js";
import { launchChromium } from "./browser.js";
import { type ConsoleSidecar, POLICY, startConsoleSidecar, TOKENS } from "./harness.js";
import { freePort, type Receiver, startReceiver } from "./notify-receiver.js";

const LONG = 300_000;
const POLL = { timeout: 30_000 };
const SECRET = "phone-webhook-secret-0123456789ab";
let s: ConsoleSidecar;
let browser: Browser;
let receiver: Receiver;
const notices = () => receiver.notices;

// One more rule before the step-ups: archiving is allowed with a notify obligation.
const WITH_NOTIFY = POLICY.replace(
  "rules:\n",
  `rules:
  - id: archive-and-tell
    name: archiving is fine, ops are told
    priority: 10
    match: { toolClass: http, action: put }
    decision: allow
    obligations: [{ type: notify, params: { channel: ops } }]
    reason: archiving
`,
);

beforeAll(async () => {
  receiver = await startReceiver();
  const port = await freePort();
  const hook = receiver.url;
  s = await startConsoleSidecar(
    {},
    {
      port,
      notifications: {
        publicUrl: `http://127.0.0.1:${port}`,
        targets: [{ name: "ops-hook", kind: "webhook", url: hook, secret: SECRET }],
      },
    },
    {},
    WITH_NOTIFY,
  );
  browser = await launchChromium();
}, LONG);

afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await receiver?.close();
});

describe("approvals anywhere on a phone", { timeout: LONG }, () => {
  it("the notice's link, followed on a phone-sized screen, lets the approver approve and the agent call completes", async () => {
    const runId = await s.run();
    const call = s.sendNote(runId, { to: "ops@example.com", text: "quarterly report", count: 1 });
    const p = await until(() => s.server.runtime.approvals.pending().find((x) => x.runId === runId), 30_000);
    const notice = await until(() => notices().find((n) => n.body.includes(p.decisionId)), 30_000);
    const ts = String(notice.headers["x-warden-timestamp"]);
    expect(notice.headers["x-warden-signature"]).toBe(`v1=${signNotice(SECRET, ts, notice.body)}`);
    const link = (JSON.parse(notice.body) as { link: string }).link;
    expect(link.startsWith(`${s.url}/console/a/`)).toBe(true);

    const ctx = await browser.newContext({
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
    });
    const page = await ctx.newPage();
    page.setDefaultTimeout(60_000);
    // Without a session the link grants nothing: sign in first.
    const first = await page.goto(link);
    expect(first?.status()).toBe(401);
    await page.goto(`${s.url}/console/sign-in`);
    await page.getByLabel("Approver or auditor token").fill(TOKENS.approver);
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/console\/approvals$/);
    await page.goto(link);
    await expect
      .poll(() => page.locator("#key-status").textContent(), POLL)
      .toContain("signed in this browser with key");
    const item = page.locator(`#approval-${p.id}`);
    await item.waitFor({ state: "visible" });
    // The page fits the phone's width: nothing to scroll sideways to reach the decision.
    const fits = await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1");
    expect(fits).toBe(true);
    await item.getByRole("radio", { name: "Approve", exact: true }).check();
    await item.getByLabel(/Justification/).fill("approved from my phone");
    await item.getByRole("button", { name: "Sign and send decision" }).tap();
    expect(await call).toMatchObject({ status: 200, decision: "allow" });
    await expect.poll(() => page.locator("main").textContent(), POLL).toContain("Approved");
    await page.goto(link);
    await expect
      .poll(() => page.locator("main").textContent(), POLL)
      .toContain("already decided by alice (approve)");
    await ctx.close();
  });

  it("a notify obligation is met by the notifier: the archive runs and ops are told", async () => {
    const runId = await s.run();
    const r = await s.archiveNote(runId, "note-7");
    expect(r).toMatchObject({ status: 200, decision: "allow" });
    expect(s.service.hits.some((h) => h.url.includes("/archive/note-7"))).toBe(true);
    const told = await until(
      () =>
        notices().find((n) => n.body.includes('"kind":"obligation"') && n.body.includes('"channel":"ops"')),
      30_000,
    );
    expect(JSON.parse(told.body)).toMatchObject({ kind: "obligation", tool: "archive_note", channel: "ops" });
  });
});
