// Approval round trip through the console in a real browser (headless Chromium): an agent
// call blocks on step-up; the approver's page (already signed in, its browser key
// registered) receives it over the live queue; the approver approves (the page signs the
// decision with its WebCrypto Ed25519 key) and the agent call resumes. Measured per
// approval: agent blocked -> item visible in the page (live queue), click -> agent resumed
// (sign, submit, verify, execute), and the whole round trip. Reported, not asserted.
import { performance } from "node:perf_hooks";
import { launchChromium, startConsoleSidecar, TOKENS } from "./_console-harness.js";

const N = Number(process.env.BENCH_CONSOLE_APPROVALS ?? 15);

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
}

async function main(): Promise<void> {
  const s = await startConsoleSidecar({ maxKeysPerApprover: 16 });
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(60_000);
    await page.goto(`${s.url}/console/sign-in`);
    await page.getByLabel("Approver or auditor token").fill(TOKENS.approver);
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/console\/approvals$/);
    await page.locator("#key-status[data-key-id]").waitFor({ state: "attached" });
    const visible: number[] = [];
    const resumed: number[] = [];
    const whole: number[] = [];
    for (let i = 0; i < N; i++) {
      const runId = await s.run();
      const t0 = performance.now();
      const call = s.sendNote(runId, { to: "ops@example.com", text: `note ${i}`, count: 1 });
      const item = page.locator(".approval").first();
      await item.waitFor({ state: "visible" });
      const t1 = performance.now();
      await item.getByRole("radio", { name: "Approve", exact: true }).check();
      await item.getByLabel(/Justification/).fill("bench approval, reviewed");
      const t2 = performance.now();
      await item.getByRole("button", { name: "Sign and send decision" }).click();
      const r = await call;
      const t3 = performance.now();
      if (r.decision !== "allow")
        throw new Error(`approval ${i} answered ${JSON.stringify(r).slice(0, 200)}`);
      visible.push(t1 - t0);
      resumed.push(t3 - t2);
      whole.push(t3 - t0);
      await page.goto(`${s.url}/console/approvals`);
    }
    const row = (name: string, xs: number[]) =>
      `| ${name} | ${pct(xs, 50).toFixed(0)} | ${pct(xs, 90).toFixed(0)} | ${Math.max(...xs).toFixed(0)} |`;
    console.log(`Approval round trip in Chromium, ${N} approvals (ms; includes Playwright's own driving)\n`);
    console.log("| step | median | p90 | max |\n|---|---|---|---|");
    console.log(row("agent blocked -> visible in the page (live queue)", visible));
    console.log(row("click -> agent resumed (sign, verify, execute)", resumed));
    console.log(row("agent blocked -> agent resumed (form filled by the driver)", whole));
  } finally {
    await browser.close();
    await s.stop();
  }
}

await main();
