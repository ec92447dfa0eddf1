// Sweep: the sandbox masks the workspace's credential files found by a bounded walk
// (src/hooks/contain.ts workspaceCredentials). A `.env` deeper than the walk went, or one
// it never reached because a large folder used up its entry budget first (depth-first), was
// readable in the sandbox: a spelling the policy cannot read (`cat …/.e*`, `python3 -c`)
// printed the key to the model. Claude Code PreToolUse payloads through the real engine,
// run as Claude Code runs the answer, and contained directly.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workspaceCredentials } from "../../src/hooks/contain.js";
import { asClaudeCode, type Harness, harness, runContained } from "./contain-harness.js";

const DEEP = "CANARY-DEEP-DOTENV-sk_live_d33p";
const deepDir = ["services", "api", "config", "env", "prod", "eu"];

let h: Harness;
beforeAll(async () => {
  h = await harness();
  mkdirSync(join(h.ws, ...deepDir), { recursive: true });
  writeFileSync(join(h.ws, ...deepDir, ".env"), `STRIPE_KEY=${DEEP}\n`);
});
afterAll(() => h?.close());

describe("sweep: workspace credential files beyond the walk", { timeout: 60_000 }, () => {
  it("a .env six folders deep is not readable in the sandbox (cat …/.e* prints no key)", async () => {
    const command = `cat ${deepDir.join("/")}/.e*`;
    const viaHook = await asClaudeCode(h, command);
    const direct = await runContained(h, command);
    expect(`${viaHook.stdout}${direct.stdout}`).not.toContain(DEEP);
  });

  it("the walk finds the root .env before a large folder uses up its budget", () => {
    // Ten large folders beside the root .env: depth-first, whichever the directory order
    // lists first used up the budget before .env was seen.
    const bigs = Array.from({ length: 10 }, (_, i) => join(h.ws, `data-${i}`));
    for (const big of bigs) {
      mkdirSync(join(big, "x"), { recursive: true });
      for (let i = 0; i < 60; i++) writeFileSync(join(big, "x", `f${i}`), "");
    }
    try {
      const found = workspaceCredentials(h.ws, undefined, 50);
      expect(found).toContain(join(h.ws, ".env"));
    } finally {
      for (const big of bigs) rmSync(big, { recursive: true, force: true });
    }
  });
});
