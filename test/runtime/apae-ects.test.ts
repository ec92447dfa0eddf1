// The runtime's ECT stream: an Execution Context Token for every governed decision and
// outcome (iss = the agent, signed by the runtime's ECT key at L2/L3, in the journal ledger
// at L3 within the decision's own commit), `par` following the value an output lent to a
// later call, the contract's [apae] claims in `ext` so `warden provenance` answers on a real
// run's journal, and the live stream feeding the behaviour verifier.
import { chmodSync, mkdirSync, mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compactVerify } from "jose";
import { describe, expect, it, vi } from "vitest";
import { type DecisionId, sha256Of } from "../../src/contracts/index.js";
import { generateKeyPair, loadPrivateKeyFile } from "../../src/crypto/index.js";
import { composeRuntime, type Runtime, type RuntimeConfig } from "../../src/runtime/index.js";
import {
  ECT_LEDGER_EVENT,
  type EctClaims,
  EctClaimsSchema,
  ledgerToken,
  provenanceOf,
  signBehaviorSpec,
  TRUST_STEP_EVENT,
} from "../../src/trust/index.js";
import { runCli } from "../helpers/cli.js";

const WHOIS = `
[tool]
name = "whois_lookup"
version = "1.0.0"
binary = "whois"
description = "WHOIS lookup for a domain"
risk_tier = "low"

[args.target]
position = 1
required = true
type = "string"
pattern = "^[a-z0-9.-]+$"
description = "domain to look up"

[command]
exec = ["whois", "{target}"]

[output]
format = "text"

[output.schema]
type = "object"

[apae]
data_source = "whois://registry"
data_classification = "public"
retention_days = 30
transformations = ["parse"]
target_arg = "target"
`;

const POLICY = `
rules:
  - { id: shell, name: shell, priority: 100, match: { toolClass: shell }, decision: allow, reason: s }
  - { id: writes, name: writes, priority: 100, match: { toolClass: file, action: write }, decision: allow, reason: w }
  - { id: no-net, name: no-net, priority: 200, match: { toolClass: http }, decision: deny, reason: no net }
`;

const OUTPUT = `Registrant: ACME Widgets International, 1 Long Road, Springfield; admin contact ops-team-7731`;

function deployment(apae: (dir: string) => NonNullable<RuntimeConfig["apae"]>, threshold = 100) {
  const dir = mkdtempSync(join(tmpdir(), "warden-ects-"));
  writeFileSync(join(dir, "policy.yaml"), POLICY);
  const contracts = join(dir, "contracts");
  mkdirSync(contracts);
  writeFileSync(join(contracts, "whois_lookup.clad.toml"), WHOIS);
  // A checkpoint tool: its ECTs are atd:checkpoint.
  writeFileSync(
    join(contracts, "save_state.clad.toml"),
    WHOIS.replace('name = "whois_lookup"', 'name = "save_state"').replace(
      'target_arg = "target"',
      'target_arg = "target"\ncheckpoint = true',
    ),
  );
  const signer = generateKeyPair("ed25519");
  const config = (): RuntimeConfig => ({
    policy: [join(dir, "policy.yaml")],
    contracts: { dir: contracts },
    journal: { path: join(dir, "journal.db"), signer },
    gate: {
      principals: { "agent-1": { id: "agent-1", roles: ["agent"] } },
      context: { quarantine: { denialThreshold: threshold } },
      requireContract: false,
    },
    apae: apae(dir),
  });
  return { dir, config, journal: join(dir, "journal.db") };
}

const whois = (runId: string, target = "example.com") => ({
  principalId: "agent-1",
  runId,
  tool: "whois_lookup",
  toolClass: "shell",
  action: "exec",
  parameters: { target },
});
const write = (runId: string, content: string) => ({
  principalId: "agent-1",
  runId,
  toolClass: "file",
  action: "write",
  parameters: { path: "notes.txt", content },
});

function claimsOfToken(token: string): EctClaims {
  const payload = token.split(".")[1] ?? "";
  return EctClaimsSchema.parse(JSON.parse(Buffer.from(payload, "base64url").toString("utf8")));
}

async function ledger(rt: Runtime): Promise<{ token: string; claims: EctClaims }[]> {
  await rt.apae?.settled();
  return (await rt.store.query({ type: ECT_LEDGER_EVENT })).map((e) => {
    const token = ledgerToken(e.body as never);
    return { token, claims: claimsOfToken(token) };
  });
}

/** whois (allowed, output reported), then a write whose content carries that output. */
async function twoCalls(rt: Runtime) {
  const run = await rt.startRun("agent-1");
  const first = await rt.gate.authorize(whois(run.runId));
  expect(first.decision).toBe("allow");
  await rt.gate.recordResult(first.decisionId as DecisionId, {
    data: { raw_output: OUTPUT },
    outputHash: sha256Of({ raw_output: OUTPUT }),
    taintLabels: [{ source: "web", origin: "whois" }],
  });
  const second = await rt.gate.authorize(write(run.runId, `summary: ${OUTPUT}`));
  expect(second.decision).toBe("allow");
  return { run, first, second };
}

describe("an ECT for every governed action", () => {
  it("at L3 the decision and outcome ECTs are in the ledger and par follows the value a later call reused", async () => {
    const d = deployment(() => ({ ectLevel: "L3" }));
    const rt = await composeRuntime(d.config());
    const { first, second } = await twoCalls(rt);
    const ects = await ledger(rt);
    const [dec1, out1, dec2] = ects.map((e) => e.claims);
    expect(ects).toHaveLength(3);
    expect(dec1).toMatchObject({
      iss: "agent-1",
      exec_act: "whois_lookup",
      par: [],
      pol_decision: "allow",
      ext: {
        "warden.phase": "decision",
        "warden.decision_id": first.decisionId,
        "apae.data_source": "whois://registry",
        "apae.target": "example.com",
      },
    });
    expect(dec1?.inp_hash).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(out1).toMatchObject({
      exec_act: "whois_lookup",
      par: [dec1?.jti],
      ext: { "warden.phase": "outcome" },
    });
    expect(out1?.out_hash).toBe(
      Buffer.from(sha256Of({ raw_output: OUTPUT }).slice(7), "hex").toString("base64url"),
    );
    // The write's parameters carry the whois output: its decision names that outcome.
    expect(dec2).toMatchObject({
      exec_act: "file.write",
      par: [out1?.jti],
      ext: { "warden.decision_id": second.decisionId },
    });
    const answer = provenanceOf(
      ects.map((e) => e.claims),
      dec2?.jti ?? "",
    );
    expect(answer).toMatchObject({
      agents: ["agent-1"],
      complete: true,
      transformed: true,
      sources: ["whois://registry"],
    });
    await rt.close();
    // `warden provenance` on the real run's journal.
    const cli = await runCli("provenance", dec2?.jti ?? "", "--journal", d.journal, "--json");
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.out)).toMatchObject({ matched: "ect", complete: true, agents: ["agent-1"] });
  });

  it("the L3 ECT is committed with its decision: one journal transaction per decision", async () => {
    const d = deployment(() => ({ ectLevel: "L3" }));
    const rt = await composeRuntime(d.config());
    const run = await rt.startRun("agent-1");
    await rt.gate.authorize(whois(run.runId)); // the policy bundle entry is written once, first
    const batches = vi.spyOn(rt.store, "appendBatch");
    const before = (await rt.store.query({})).length;
    expect((await rt.gate.authorize(whois(run.runId))).decision).toBe("allow");
    expect((await rt.store.query({})).length - before).toBe(2);
    expect(batches).toHaveBeenCalledTimes(1);
    await rt.close();
  });

  it("L2 ECTs are signed by the runtime's key (generated 0600 beside the journal, kept across restarts)", async () => {
    const d = deployment(() => ({ ectLevel: "L2" }));
    const rt = await composeRuntime(d.config());
    const keyFile = `${d.journal}.ect-key.pem`;
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const pair = loadPrivateKeyFile(keyFile);
    const tokens: string[] = [];
    const stop = rt.apae?.ects.listen((e) => tokens.push(e.token));
    await twoCalls(rt);
    stop?.();
    expect(rt.apae?.ects.level).toBe("L2");
    expect(tokens).toHaveLength(3);
    for (const t of tokens) {
      const { protectedHeader } = await compactVerify(t, pair.publicKey, { algorithms: ["ES256"] });
      expect(protectedHeader).toMatchObject({ alg: "ES256", typ: "wimse-exec+jwt", kid: pair.keyId });
    }
    // A token edited after signing does not verify.
    const [h, p, sig] = tokens[0]?.split(".") ?? [];
    const forged = Buffer.from(
      JSON.stringify({ ...claimsOfToken(tokens[0] ?? ""), iss: "someone-else" }),
    ).toString("base64url");
    await expect(compactVerify(`${h}.${forged}.${sig}`, pair.publicKey)).rejects.toThrow();
    expect(p).toBeDefined();
    // Nothing is appended to the ledger below L3.
    expect(await ledger(rt)).toHaveLength(0);
    await rt.close();
    const again = await composeRuntime(d.config());
    expect(loadPrivateKeyFile(keyFile).keyId).toBe(pair.keyId);
    await again.close();
  });

  it("a group-readable ECT key file stops the start", async () => {
    const d = deployment(() => ({ ectLevel: "L2" }));
    const rt = await composeRuntime(d.config());
    await rt.close();
    chmodSync(`${d.journal}.ect-key.pem`, 0o640);
    await expect(composeRuntime(d.config())).rejects.toMatchObject({ code: "ERR_TRUST_CONFIG_INVALID" });
  });
});

describe("the live stream feeds the behaviour verifier", () => {
  function withSpec(constraints: Record<string, unknown>, allowed: string[]) {
    const operator = generateKeyPair("ed25519");
    return deployment((dir) => {
      const keyFile = join(dir, "operator.pub.pem");
      writeFileSync(keyFile, operator.publicKey.export({ format: "pem", type: "spki" }).toString());
      const spec = signBehaviorSpec(
        {
          spec_version: "1.0",
          agent_id: "agent-1",
          allowed_actions: allowed,
          constraints,
          verification_frequency: "continuous",
        },
        operator,
      );
      const specFile = join(dir, "spec.json");
      writeFileSync(specFile, JSON.stringify(spec));
      return { ectLevel: "L3", behavior: { keys: [keyFile], specs: [specFile] } };
    });
  }

  async function violations(rt: Runtime) {
    await rt.apae?.settled();
    return (await rt.store.query({ type: TRUST_STEP_EVENT })).map(
      (e) => e.body as { kind: string; ect: string },
    );
  }

  it("an action outside the spec's allowed_actions is a policy_violation naming its decision ECT", async () => {
    const d = withSpec({}, ["whois_lookup"]);
    const rt = await composeRuntime(d.config());
    const run = await rt.startRun("agent-1");
    expect((await rt.gate.authorize(write(run.runId, "x"))).decision).toBe("allow");
    const ects = await ledger(rt);
    const write1 = ects.find((e) => e.claims.exec_act === "file.write");
    const compliance = ects.find((e) => e.claims.exec_act === "apae:compliance_check");
    expect(compliance?.claims).toMatchObject({
      par: [write1?.claims.jti],
      ext: { "apae.compliance_status": "failing" },
    });
    expect(await violations(rt)).toEqual([
      expect.objectContaining({ kind: "policy_violation", ect: write1?.claims.jti }),
    ]);
    await rt.close();
  });

  it("a consequential action without a checkpoint before it is a violation; after a checkpoint tool it passes", async () => {
    const d = withSpec({ require_checkpoint_before: ["whois_lookup"] }, ["whois_lookup"]);
    const rt = await composeRuntime(d.config());
    const run = await rt.startRun("agent-1");
    expect((await rt.gate.authorize(whois(run.runId))).decision).toBe("allow");
    expect((await violations(rt)).map((v) => v.kind)).toEqual(["policy_violation"]);
    const cp = await rt.gate.authorize({ ...whois(run.runId, "state"), tool: "save_state" });
    expect(cp.decision).toBe("allow");
    expect((await rt.gate.authorize(whois(run.runId))).decision).toBe("allow");
    // Still one: the checkpoint's ECT (atd:checkpoint) preceded the second lookup.
    expect(await violations(rt)).toHaveLength(1);
    const acts = (await ledger(rt)).map((e) => e.claims.exec_act);
    expect(acts).toContain("atd:checkpoint");
    await rt.close();
  });

  it("a forbidden target named by the contract's target argument is a violation", async () => {
    const d = withSpec({ forbidden_targets: ["core-router-*"] }, ["whois_lookup"]);
    const rt = await composeRuntime(d.config());
    const run = await rt.startRun("agent-1");
    expect((await rt.gate.authorize(whois(run.runId, "example.com"))).decision).toBe("allow");
    expect(await violations(rt)).toEqual([]);
    expect((await rt.gate.authorize(whois(run.runId, "core-router-7"))).decision).toBe("allow");
    expect((await violations(rt)).map((v) => v.kind)).toEqual(["policy_violation"]);
    await rt.close();
  });
});

const dbQuery = (runId: string) => ({
  principalId: "agent-1",
  runId,
  toolClass: "database",
  action: "query",
  parameters: { sql: "select 1" },
});

describe("the denial threshold is APAE's", () => {
  it("an agent past its run's denial threshold is charged by trust and held by the trust quarantine alone", async () => {
    const d = deployment(() => ({ ectLevel: "L1" }), 2);
    const rt = await composeRuntime(d.config());
    const run = await rt.startRun("agent-1");
    // No rule matches: default denials. The first is under the threshold (2); from the
    // second on each is a violation: 0.5 → 0.32 → 0.2048 → 0.131072 (quarantined).
    for (let i = 0; i < 4; i++) expect((await rt.gate.authorize(dbQuery(run.runId))).decision).toBe("deny");
    await rt.apae?.settled();
    const steps = (await rt.store.query({ type: TRUST_STEP_EVENT })).map((e) => e.body.after);
    expect(steps).toEqual([0.32, 0.2048, 0.131072]);
    expect(await rt.apae?.engine.view("agent-1")).toMatchObject({ status: "quarantined" });
    expect(rt.sessions.principals.quarantineOf("agent-1")?.type).toBe("trust_score");
    // The context did not set a second (denial_threshold) quarantine of its own.
    const own = await rt.store.query({ type: "warden.system.quarantine" });
    expect(own.map((e) => e.body.trigger)).not.toContain("threshold");
    // Held: the quarantined refusals that follow are not charged again.
    const held = await rt.gate.authorize(write(run.runId, "x"));
    expect(held.reasonCodes).toContain("quarantined");
    await rt.apae?.settled();
    expect(await rt.store.query({ type: TRUST_STEP_EVENT })).toHaveLength(3);
    await rt.close();
  });
});
