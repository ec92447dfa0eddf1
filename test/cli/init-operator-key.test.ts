// `warden init` gives the operator an Ed25519 approval key (keys/operator.pem) and lists its
// public half under the operator's `publicKeys`, so step-up verdicts can be signed outside
// the browser console (the Python client, scripts): before, an init deployment (console on:
// signed verdicts required) left a non-browser approver no way to approve at all.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadPrivateKeyFile } from "../../src/crypto/index.js";
import { ApproverKeyring, checkApprovalSignature, signApproval } from "../../src/journal/index.js";
import { loadSidecarConfig } from "../../src/server/index.js";
import { runCli } from "../helpers/cli.js";

const dir = mkdtempSync(join(tmpdir(), "warden-init-operator-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("warden init: the operator's approval key", () => {
  it("writes keys/operator.pem (0600) and configures its public key for the operator", async () => {
    const deployment = join(dir, "d");
    const r = await runCli("init", deployment);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/operator\.pem, the operator's Ed25519 key/);
    const key = loadPrivateKeyFile(join(deployment, "keys", "operator.pem"));
    const loaded = loadSidecarConfig(join(deployment, "sidecar.yaml"));
    const operator = loaded.config.auth.approvers.find((a) => a.id === "operator");
    expect(operator?.publicKeys).toEqual([
      readFileSync(join(deployment, "keys", "operator.pub.pem"), "utf8"),
    ]);
    // A verdict the operator signs with that file verifies against the configured keys.
    const ring = ApproverKeyring.fromPem({ operator: operator?.publicKeys ?? [] });
    const statement = {
      decision_id: "dec-1",
      action: "approve" as const,
      approver_id: "operator",
      justification: "checked with the customer",
      time: new Date().toISOString(),
    };
    const signed = signApproval(statement, key.privateKey);
    expect(checkApprovalSignature(ring, statement, signed.keyId, signed.signature)).toEqual({ ok: true });
    // Another operator's key does not.
    const other = loadPrivateKeyFile(join(dir, "d", "keys", "journal.pem"));
    const forged = signApproval(statement, other.privateKey);
    expect(checkApprovalSignature(ring, statement, forged.keyId, forged.signature).ok).toBe(false);
  });
});
