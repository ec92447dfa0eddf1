// The runtime's AgentPin authenticator: an unauthenticated caller cannot make it fetch
// documents for a domain of its choosing (only bound agents are resolved), and a bound
// agent's domain is fetched under the SSRF rules.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generateKeyPair } from "../../src/crypto/index.js";
import { defaultEventTypes, openJournal, SqliteJournalStore } from "../../src/journal/index.js";
import { AgentPinAuthenticator, registerRuntimeEventTypes } from "../../src/runtime/index.js";
import { issue, makeDomain } from "./agentpin-fixture.js";

async function journal() {
  registerRuntimeEventTypes(defaultEventTypes);
  const store = SqliteJournalStore.open(join(mkdtempSync(join(tmpdir(), "warden-agentpin-rt-")), "j.db"));
  return { store, journal: await openJournal({ store, signer: generateKeyPair("ed25519") }) };
}

describe("AgentPinAuthenticator", () => {
  const evil = makeDomain("evil.example");
  const acme = makeDomain("acme.example");
  const now = () => 1_800_000_000_000;

  it("a credential for an unbound agent is refused before any document is fetched", async () => {
    const looked: string[] = [];
    const resolver = async (h: string) => {
      looked.push(h);
      return [{ address: "93.184.216.34", family: 4 as const }];
    };
    const { journal: j } = await journal();
    const a = new AgentPinAuthenticator(
      { audience: "verifier.example", online: { resolver }, principals: { [acme.agent]: "agent-1" } },
      j,
      now,
    );
    const r = await a.authenticate(issue(evil));
    expect(r).toMatchObject({ ok: false, code: "ERR_IDENTITY_AGENT_NOT_FOUND" });
    expect(looked).toEqual([]);
  });

  it("a bound agent whose domain resolves to a private address is DISCOVERY_FETCH_FAILED (SSRF rule)", async () => {
    const looked: string[] = [];
    const resolver = async (h: string) => {
      looked.push(h);
      return [{ address: "10.1.2.3", family: 4 as const }];
    };
    const { journal: j } = await journal();
    const a = new AgentPinAuthenticator(
      { audience: "verifier.example", online: { resolver }, principals: { [acme.agent]: "agent-1" } },
      j,
      now,
    );
    const r = await a.authenticate(issue(acme));
    expect(r).toMatchObject({ ok: false, code: "ERR_IDENTITY_DISCOVERY_FETCH_FAILED" });
    expect(looked).toEqual(["acme.example"]);
  });
});
