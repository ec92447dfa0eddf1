// The console's shadow page as an attack surface: the examples it shows are agent-controlled
// parameters (markup, javascript: links, bidi and zero-width characters, a megabyte string),
// and they arrive as visible, inert text; the counts are the journal's.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { VIEW_PAGES } from "../../../src/console/views/index.js";
import { generateKeyPair } from "../../../src/crypto/index.js";
import { composeRuntime, type Runtime } from "../../../src/runtime/index.js";
import { contextOf, expectInert, HOSTILE_RUN, hostileRun } from "./fixture.js";

const POLICY = `
rules:
  - { id: fetch, name: fetch, priority: 100, match: { toolClass: web, action: fetch }, decision: allow, reason: reads }
  - { id: no-mail, name: no mail, priority: 90, match: { toolClass: mail }, decision: deny, reason: denied }
`;
const CANDIDATE = `
rules:
  - { id: cand-no-fetch, name: x, priority: 10, match: { toolClass: web, action: fetch }, decision: deny, reason: candidate }
  - { id: no-mail, name: no mail, priority: 90, match: { toolClass: mail }, decision: deny, reason: denied }
`;

let rt: Runtime | undefined;
afterEach(async () => {
  await rt?.close();
  rt = undefined;
});

describe("shadow page", () => {
  it("hostile example parameters are shown as inert text, with the shadow's rule and the counts", async () => {
    const dir = mkdtempSync(join(tmpdir(), "warden-views-shadow-"));
    writeFileSync(join(dir, "policy.yaml"), POLICY);
    writeFileSync(join(dir, "candidate.yaml"), CANDIDATE);
    rt = await composeRuntime({
      policy: [join(dir, "policy.yaml")],
      shadow: { policy: [join(dir, "candidate.yaml")] },
      journal: { path: join(dir, "journal.db"), signer: generateKeyPair("ed25519") },
      gate: {
        principals: { agent: { id: "agent", roles: ["agent"] } },
        requireContract: false,
        runs: "caller",
      },
    });
    await hostileRun(rt, HOSTILE_RUN);
    await rt.shadow?.settle();
    const page = VIEW_PAGES.find((p) => p.path === "/shadow");
    if (page === undefined) throw new Error("no /shadow page");
    const out = (await page.render(contextOf(rt), { params: {}, query: {} })).value;
    expectInert(out);
    expect(out).toContain("cand-no-fetch");
    // Two fetches would be denied; the mail was denied by both (no disagreement).
    expect(out).toContain("2 of 3 decisions would change");
  });

  it("a malformed since is refused with its code, nothing read", async () => {
    const dir = mkdtempSync(join(tmpdir(), "warden-views-shadow-"));
    writeFileSync(join(dir, "policy.yaml"), POLICY);
    rt = await composeRuntime({
      policy: [join(dir, "policy.yaml")],
      journal: { path: join(dir, "journal.db"), signer: generateKeyPair("ed25519") },
      gate: {
        principals: { agent: { id: "agent", roles: ["agent"] } },
        requireContract: false,
        runs: "caller",
      },
    });
    const page = VIEW_PAGES.find((p) => p.path === "/shadow");
    const out =
      (await page?.render(contextOf(rt), { params: {}, query: { since: "<script>" } }))?.value ?? "";
    expect(out).toContain("ERR_CONSOLE_VIEW_INPUT");
    expectInert(out);
  });
});
