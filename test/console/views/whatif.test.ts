// What-if in the console over a run recorded by the real `warden run` runtime (recorder
// on, pinned bundle), replayed through the CLI's own replay host: the diff table is the
// decisions the pasted policy changes; a bad policy is its coded error and nothing runs.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliReplayHost } from "../../../src/cli/replay-host.js";
import type { ConsoleActionResult } from "../../../src/console/page.js";
import { auditViews, MAX_WHATIF_POLICY_BYTES, VIEW_ACTIONS } from "../../../src/console/views/index.js";
import { sha256Hex } from "../../../src/contracts/index.js";
import { loadPrivateKeyFile } from "../../../src/crypto/index.js";
import { composeRuntime, type Runtime } from "../../../src/runtime/index.js";
import { type Recorded, recordedFileRun, STRICTER } from "../../evidence/fixture.js";
import { contextOf, expectInert, IMG } from "./fixture.js";

const WHATIF = auditViews({ replayHost: cliReplayHost }).actions.find((a) => a.path === "/whatif");

/** The console's runtime over the recorded journal (same key, same policy). */
async function consoleRuntime(f: Recorded): Promise<Runtime> {
  return composeRuntime({
    policy: [join(f.dir, "policy.yaml")],
    journal: { path: f.db, signer: loadPrivateKeyFile(f.key) },
    gate: { principals: { agent: { id: "agent", roles: [] } }, requireContract: true },
  });
}

async function whatif(
  rt: Runtime,
  body: Record<string, string>,
): Promise<{ page: string; r: ConsoleActionResult }> {
  const r = await WHATIF!.handle(contextOf(rt), { csrf: "csrf-token-1", ...body });
  if (r.kind !== "page") throw new Error("what-if answers with a page");
  return { page: r.html.value, r };
}

describe("what-if", () => {
  it("a stricter policy pasted in the console shows exactly the decisions it changes", async () => {
    const f = await recordedFileRun();
    const rt = await consoleRuntime(f);
    try {
      const { page, r } = await whatif(rt, { policy: STRICTER, run: f.runId, since: "", until: "" });
      expect(page).toContain("1 run(s), 4 step(s): 2 changed, 2 unchanged.");
      const rows = [...page.matchAll(/<tr><td><a href="[^"]+">.*?<\/tr>/gs)].map((m) => m[0]);
      expect(rows).toHaveLength(2);
      for (const [i, step] of [
        [0, 1],
        [1, 4],
      ] as const) {
        expect(rows[i]).toContain(`<td>${step}</td>`);
        expect(rows[i]).toContain('<td class="decision-allow">allow</td><td class="decision-deny">deny</td>');
        expect(rows[i]).toContain('<code><span class="agent-text">no-notes</span></code>');
      }
      expect(r.audit).toMatchObject({ ok: true, runs: 1, changed: 2, policy: sha256Hex(STRICTER) });
    } finally {
      await rt.close();
    }
  });

  it("a policy that does not parse is its coded error; nothing is replayed", async () => {
    const f = await recordedFileRun();
    const rt = await consoleRuntime(f);
    try {
      const bad = `rules:\n  - { id: x, match: { toolClass: file }, decision: explode, reason: "${IMG}" }\n`;
      const { page, r } = await whatif(rt, { policy: bad, run: f.runId });
      expect(page).toMatch(/ERR_POLICY_[A-Z_]+/);
      expect(page).not.toContain("step(s)");
      expectInert(page);
      expect(r.audit).toMatchObject({ ok: false, code: expect.stringMatching(/^ERR_POLICY_/) });
    } finally {
      await rt.close();
    }
  });

  it("a policy over 256 KiB, or a run and a time range together, is refused before anything is read", async () => {
    const f = await recordedFileRun();
    const rt = await consoleRuntime(f);
    try {
      const big = `# ${"x".repeat(MAX_WHATIF_POLICY_BYTES)}\n${STRICTER}`;
      expect((await whatif(rt, { policy: big, run: f.runId })).page).toContain("ERR_CONSOLE_VIEW_INPUT");
      const both = await whatif(rt, { policy: STRICTER, run: f.runId, since: "2020-01-01T00:00:00Z" });
      expect(both.page).toContain("ERR_CONSOLE_VIEW_INPUT");
    } finally {
      await rt.close();
    }
  });

  it("without the entry point's replay host what-if is ERR_CONSOLE_VIEW_UNAVAILABLE", async () => {
    const f = await recordedFileRun();
    const rt = await consoleRuntime(f);
    try {
      const plain = VIEW_ACTIONS.find((a) => a.path === "/whatif");
      const r = await plain!.handle(contextOf(rt), { policy: STRICTER, run: f.runId });
      expect(r.kind === "page" && r.html.value).toContain("ERR_CONSOLE_VIEW_UNAVAILABLE");
    } finally {
      await rt.close();
    }
  });
});
