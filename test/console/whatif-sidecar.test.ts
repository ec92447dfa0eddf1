// What-if in the sidecar's console: `warden sidecar` hands the console the CLI's replay
// host, so an auditor's pasted policy is replayed over the sidecar's own recorded runs; a
// sidecar given no replay host answers what-if with a coded refusal, never a guess.
import { afterEach, describe, expect, it } from "vitest";
import { cliReplayHost } from "../../src/cli/replay-host.js";
import { ConsoleClient, type ConsoleSidecar, startConsoleSidecar, TOKENS } from "./harness.js";

const ALLOW_SHELL = `
name: looser
version: "1.0"
rules:
  - { id: shell-ok, name: shell is fine now, priority: 1, match: { toolClass: shell }, decision: allow, reason: looser }
`;

let s: ConsoleSidecar | undefined;
afterEach(async () => {
  await s?.stop();
  s = undefined;
});

async function deniedShellRun(sc: ConsoleSidecar): Promise<string> {
  const runId = await sc.run();
  const r = await fetch(`${sc.url}/v1/decide`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKENS.agent}`, "content-type": "application/json" },
    body: JSON.stringify({ runId, toolClass: "shell", action: "exec", parameters: { cmd: "ls" } }),
  });
  expect(((await r.json()) as { decision?: string }).decision).toBe("deny");
  return runId;
}

async function whatif(sc: ConsoleSidecar, runId: string): Promise<string> {
  const auditor = new ConsoleClient(sc.url);
  expect(await auditor.signIn(TOKENS.auditor)).toBe(303);
  const r = await auditor.request("/whatif", {
    form: { csrf: auditor.csrf ?? "", policy: ALLOW_SHELL, run: runId, since: "", until: "" },
  });
  return r.text;
}

describe("what-if in the sidecar's console", () => {
  it("replays the sidecar's recorded run under a pasted policy and shows the changed decision", async () => {
    s = await startConsoleSidecar({}, {}, { replayHost: cliReplayHost });
    const runId = await deniedShellRun(s);
    const page = await whatif(s, runId);
    expect(page).not.toContain("ERR_CONSOLE_VIEW_UNAVAILABLE");
    expect(page).toContain("deny");
    expect(page).toContain("allow");
    expect(page).toContain("shell-ok");
  });

  it("a sidecar without a replay host refuses what-if with its code", async () => {
    s = await startConsoleSidecar();
    const runId = await deniedShellRun(s);
    expect(await whatif(s, runId)).toContain("ERR_CONSOLE_VIEW_UNAVAILABLE");
  });
});
