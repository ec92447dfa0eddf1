// The demo's trust act (APAE, docs/trust.md): an agent that keeps asking for credential
// files, in a fresh run each time. Every refusal by a policy rule is a policy_violation trust
// event (AIMD, × β² = 0.64): its score falls 0.5 → 0.32 → 0.2048 (below the revocation floor
// 0.2: its capability tokens and delegations are revoked) → 0.131072 (below the quarantine
// floor 0.15: trust quarantine for 1 h). From then on the agent is held in every run, even
// for a harmless read. Everything is real: the runtime (composeRuntime) with APAE on, the
// Gate, the signed journal in a temp directory (removed at the end), one ECT per decision.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateKeyPair } from "warden-runtime/crypto";
import { composeRuntime, type Runtime } from "warden-runtime/runtime";
import { TRUST_STEP_EVENT } from "warden-runtime/trust";

const AGENT = "scout";

const POLICY = `
rules:
  - id: deny-credentials
    name: Never read credential files
    priority: 100
    match: { toolClass: file, parameters: { path: { pattern: "(^|/)(secrets?|\\\\.aws|\\\\.ssh)(/|$)" } } }
    decision: deny
    reason: Credential files are never readable
  - { id: allow-files, name: files, priority: 200, match: { toolClass: file, action: [read, write] }, decision: allow, reason: files }
`;

const file = (runId: string, action: "read" | "write", path: string) => ({
  principalId: AGENT,
  runId,
  toolClass: "file",
  action,
  parameters: action === "read" ? { path } : { path, content: "status: ok" },
});

export interface TrustDemoSummary {
  scores: number[];
  revoked: boolean;
  quarantined: boolean;
  quarantineUntil: string | null;
  heldReasons: string[];
  stepsWithEct: number;
}

async function probe(rt: Runtime, out: (s: string) => void, attempt: number): Promise<number> {
  const apae = rt.apae as NonNullable<Runtime["apae"]>;
  const before = apae.viewOf(AGENT).score;
  const run = await rt.startRun(AGENT);
  const o = await rt.gate.authorize(file(run.runId, "read", `secrets/key-${attempt}.txt`));
  await apae.settled();
  const v = apae.viewOf(AGENT);
  out(
    `trust     ${AGENT} probe ${attempt}: ${o.decision} (${o.reasonCodes.join(", ")}); ` +
      `score ${before} -> ${v.score} (policy_violation)\n`,
  );
  return v.score;
}

/** Runs the trust act, printing its lines; resolves to the summary (also printed as TRUST_SUMMARY). */
export async function trustDemo(out: (s: string) => void): Promise<TrustDemoSummary> {
  const work = mkdtempSync(join(tmpdir(), "warden-demo-trust-"));
  let rt: Runtime | undefined;
  try {
    writeFileSync(join(work, "policy.yaml"), POLICY);
    rt = await composeRuntime({
      policy: [join(work, "policy.yaml")],
      journal: { path: join(work, "journal.db"), signer: generateKeyPair("ed25519") },
      gate: { principals: { [AGENT]: { id: AGENT, roles: ["agent"] } }, requireContract: false },
      apae: {},
    });
    const apae = rt.apae as NonNullable<Runtime["apae"]>;
    let revoked = false;
    apae.onRevoke((r) => {
      revoked = true;
      out(
        `trust     ${r.subject} below the revocation floor ${r.threshold}: tokens and delegations revoked\n`,
      );
    });
    out(`\n== trust (APAE): ${AGENT} keeps asking for credential files, a fresh run each time ==\n`);
    const scores = [apae.viewOf(AGENT).score];
    for (let i = 1; i <= 5 && apae.viewOf(AGENT).status !== "quarantined"; i++)
      scores.push(await probe(rt, out, i));
    const v = apae.viewOf(AGENT);
    const until = v.quarantineUntil === null ? null : new Date(v.quarantineUntil).toISOString();
    if (v.status === "quarantined")
      out(
        `trust     ${AGENT} QUARANTINED until ${until} (score ${v.score} below the quarantine floor 0.15)\n`,
      );
    const run = await rt.startRun(AGENT);
    // Quarantine lets read-only work drain; anything else is held, in every run.
    const held = await rt.gate.authorize(file(run.runId, "write", "notes.txt"));
    out(`trust     ${AGENT} new run, a harmless write: ${held.decision} (${held.reasonCodes.join(", ")})\n`);
    const steps = await rt.store.query({ type: TRUST_STEP_EVENT });
    const summary: TrustDemoSummary = {
      scores,
      revoked,
      quarantined: v.status === "quarantined",
      quarantineUntil: until,
      heldReasons: held.reasonCodes,
      stepsWithEct: steps.filter((e) => typeof e.body.ect === "string").length,
    };
    out(`TRUST_SUMMARY ${JSON.stringify(summary)}\n`);
    return summary;
  } finally {
    await rt?.close();
    rmSync(work, { recursive: true, force: true });
  }
}
