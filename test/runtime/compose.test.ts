// The composition root: contracts admitted by the trust store with every load journaled,
// a refused load journaled before the start fails, principal state that survives a
// restart on the same files, and idle-run eviction written to the journal.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generateKeyPair, type KeyPair, Keyring } from "../../src/crypto/index.js";
import { openEmbeddedStore, verifyJournal } from "../../src/journal/index.js";
import { composeRuntime, RUN_EVICTED_EVENT, type RuntimeConfig } from "../../src/runtime/index.js";
import { loadContract, signContractFile } from "../../src/tools/index.js";

const whois = readFileSync(new URL("../tools/fixtures/whois_lookup.clad.toml", import.meta.url), "utf8");

const POLICY = `
rules:
  - { id: writes, name: writes, priority: 100, match: { toolClass: file, action: write }, decision: allow, reason: w }
`;

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "warden-rt-"));
}

function deployment(extra: Partial<RuntimeConfig> = {}) {
  const dir = tempDir();
  const policy = join(dir, "policy.yaml");
  writeFileSync(policy, POLICY);
  const signer = generateKeyPair("ed25519");
  const config = (): RuntimeConfig => ({
    policy: [policy],
    journal: { path: join(dir, "journal.db"), signer },
    gate: {
      principals: { "agent-1": { id: "agent-1", roles: ["agent"] } },
      context: { quarantine: { denialThreshold: 2 } },
      requireContract: false,
    },
    ...extra,
  });
  return { dir, signer, config };
}

async function entryTypes(path: string, signer: KeyPair): Promise<string[]> {
  const store = openEmbeddedStore(path, { readonly: true });
  try {
    const report = await verifyJournal(store, new Keyring([signer.publicKey]));
    expect(report.ok).toBe(true);
    const types: string[] = [];
    for await (const e of store.entries()) if ("type" in e) types.push(e.type);
    return types;
  } finally {
    await store.close();
  }
}

function contractsDir(): { dir: string; file: string; publisher: KeyPair } {
  const dir = tempDir();
  const file = join(dir, "whois_lookup.clad.toml");
  writeFileSync(file, whois);
  const publisher = generateKeyPair("p256");
  const loaded = loadContract(file);
  if (!loaded.ok) throw new Error(loaded.message);
  signContractFile(loaded.tool.contract, file, { privateKey: publisher.privateKey, domain: "tools.example" });
  return { dir, file, publisher };
}

const pem = (k: KeyPair) => k.publicKey.export({ format: "pem", type: "spki" }).toString();

const write = (runId: string) => ({
  principalId: "agent-1",
  runId,
  toolClass: "file",
  action: "write",
  parameters: { path: "notes.txt", content: "x" },
});
const shell = (runId: string) => ({ ...write(runId), toolClass: "shell", action: "exec", parameters: {} });

describe("composeRuntime", () => {
  it("journals every contract the trust store admitted", async () => {
    const c = contractsDir();
    const d = deployment({ contracts: { dir: c.dir, trust: { mode: "enforce", keys: [pem(c.publisher)] } } });
    const rt = await composeRuntime(d.config());
    expect(rt.contracts?.names()).toEqual(["whois_lookup"]);
    expect(rt.trust.summary().mode).toBe("enforce");
    await rt.close();
    expect(await entryTypes(d.config().journal.path, d.signer)).toContain("warden.contract.loaded");
  });

  it("a tampered signed contract stops the start, and the refusal is in the journal first", async () => {
    const c = contractsDir();
    const original = readFileSync(c.file, "utf8");
    const tampered = original.replace('pattern = "^[a-z0-9.-]+$"', 'pattern = "^[a-z0-9.-]*$"');
    expect(tampered).not.toBe(original);
    writeFileSync(c.file, tampered);
    const d = deployment({ contracts: { dir: c.dir, trust: { mode: "enforce", keys: [pem(c.publisher)] } } });
    await expect(composeRuntime(d.config())).rejects.toMatchObject({ code: "ERR_TOOL_REGISTRY_UNVERIFIED" });
    const types = await entryTypes(d.config().journal.path, d.signer);
    expect(types).toContain("warden.contract.refused");
    expect(types).not.toContain("warden.contract.loaded");
  });

  it("an unsigned contract is refused under enforce even though it parses", async () => {
    const c = contractsDir();
    writeFileSync(join(c.dir, "extra.clad.toml"), whois.replace('name = "whois_lookup"', 'name = "extra"'));
    const d = deployment({ contracts: { dir: c.dir, trust: { mode: "enforce", keys: [pem(c.publisher)] } } });
    await expect(composeRuntime(d.config())).rejects.toMatchObject({ code: "ERR_TOOL_REGISTRY_UNVERIFIED" });
  });

  it("an agent quarantined before a restart is still quarantined in a new run after it", async () => {
    const d = deployment();
    const first = await composeRuntime(d.config());
    const run1 = await first.startRun("agent-1");
    expect((await first.gate.authorize(write(run1.runId))).decision).toBe("allow");
    for (let i = 0; i < 2; i++) await first.gate.authorize(shell(run1.runId));
    expect(first.sessions.principals.quarantineOf("agent-1")).toBeDefined();
    await first.close();

    const second = await composeRuntime(d.config());
    const run2 = await second.startRun("agent-1");
    expect(run2.runId).not.toBe(run1.runId);
    const out = await second.gate.authorize(write(run2.runId));
    expect(out.decision).toBe("deny");
    expect(out.reasonCodes).toContain("quarantined");
    await second.close();
  });

  it("an agent that rotates runId after a restart stays quarantined (caller-named runs)", async () => {
    const d = deployment();
    const first = await composeRuntime(d.config());
    for (let i = 0; i < 2; i++) await first.gate.authorize(shell("run-a"));
    await first.close();
    const second = await composeRuntime(d.config());
    const out = await second.gate.authorize(write("run-b"));
    expect(out.decision).toBe("deny");
    expect(out.reasonCodes).toContain("quarantined");
    await second.close();
  });

  it("journals an idle run's eviction", async () => {
    let now = 1_700_000_000_000;
    const d = deployment();
    const cfg = d.config();
    cfg.gate.context = { limits: { idleMs: 1000 } };
    const rt = await composeRuntime(cfg, { clock: () => now });
    const idle = await rt.startRun("agent-1");
    now += 5000;
    expect(rt.sessions.sweep().map((r) => r.runId)).toEqual([idle.runId]);
    await rt.close();
    expect(await entryTypes(cfg.journal.path, d.signer)).toContain(RUN_EVICTED_EVENT);
  });

  it("builds only the executors the configuration names, over the runtime's shared deps", async () => {
    const d = deployment();
    const none = await composeRuntime(d.config());
    expect(none.executors.http).toBeUndefined();
    expect(none.executors.process).toBeUndefined();
    expect(none.executors.file()).toBeUndefined();
    await none.close();
    const cfg = d.config();
    cfg.executors = { http: {}, process: { workDir: d.dir }, file: { root: d.dir } };
    const rt = await composeRuntime(cfg);
    expect(rt.executors.http).toBeDefined();
    expect(rt.executors.process).toBeDefined();
    expect(rt.executors.file()).toBe(rt.executors.file());
    await rt.close();
  });

  it("a bad executor option stops the start with its code (fail closed, before any run)", async () => {
    const d = deployment();
    const cfg = d.config();
    cfg.executors = { process: { workDir: "relative/dir" } };
    await expect(composeRuntime(cfg)).rejects.toMatchObject({ code: "ERR_EXEC_CONFIG_INVALID" });
    const again = await composeRuntime(d.config());
    await again.close();
  });
});
