import { createHash } from "node:crypto";
import { chmodSync, existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { SECRET, WELCOME, type Workspace, workspace } from "./demo-fixture.js";

let ws: Workspace;
beforeAll(async () => {
  ws = await workspace();
});
afterAll(async () => {
  await ws.close();
});

let n = 0;
/** `warden exec` against the fixture; each call gets its own journal unless `db` is given. */
async function exec(call: unknown, extra: string[] = [], db = join(ws.dir, `exec-${++n}.db`)) {
  const file = ws.json(`call-${++n}.json`, call);
  const r = await runCli(
    "exec",
    "--contracts",
    ws.contracts,
    "--policy",
    ws.policy,
    "--sandbox",
    ws.sandbox,
    "--db",
    db,
    "--call",
    file,
    ...extra,
  );
  return { ...r, db, json: r.code === 2 ? undefined : JSON.parse(r.out) };
}

const sha256 = (b: Buffer | string) => `sha256:${createHash("sha256").update(b).digest("hex")}`;

describe("warden exec: allowed calls run and leave evidence", () => {
  it("fetches a page over loopback (opt-in): exit 0, the evidence hashes the exact bytes served", async () => {
    const r = await exec({ tool: "fetch_page", parameters: { page: "welcome" } }, ["--allow-loopback"]);
    expect(r.code).toBe(0);
    expect(r.json.decision).toMatchObject({ decision: "allow", reasonCodes: ["RULE:demo-allow-wiki-reads"] });
    expect(r.json.result).toMatchObject({ ok: true, taint: ["web"] });
    expect(r.json.result.output.raw_output).toBe(WELCOME.toString());
    expect(r.json.evidence).toMatchObject({
      status: "success",
      output_hash: sha256(WELCOME),
      decision_id: r.json.decision.decisionId,
      identity: { principal_id: "agent" },
      tool: { name: "fetch_page", class: "http", action: "get" },
    });
    expect(r.json.journal).toMatchObject({ verified: true, db: r.db });
    // The independent verifier agrees, with only the public key written beside the journal.
    const v = await runCli("journal", "verify", "--db", r.db, "--keys", `${r.db}.key.pub.pem`);
    expect(v.out).toContain("journal intact");
    expect(v.code).toBe(0);
  });

  it("reads a sandbox file through the built-in file_read (FileExecutor), toolClass/action filled in", async () => {
    const r = await exec({ tool: "file_read", parameters: { path: "notes.txt" } });
    expect(r.code).toBe(0);
    expect(r.json.result.output).toBe("the report ships on friday\n");
    expect(r.json.evidence.invocation).toMatchObject({ kind: "file", op: "read", path: "notes.txt" });
    expect(r.json.evidence.tool).toMatchObject({ class: "file", action: "read" });
  });

  it("writes the journal key beside --db with mode 0600 and prints only its public half", async () => {
    const r = await exec({ tool: "file_read", parameters: { path: "notes.txt" } });
    expect(statSync(`${r.db}.key.pem`).mode & 0o777).toBe(0o600);
    expect(r.json.key.generatedAt).toBe(`${r.db}.key.pem`);
    expect(r.json.key.publicKeyPem).toContain("BEGIN PUBLIC KEY");
    expect(r.out).not.toContain("PRIVATE KEY");
  });

  it("appends to an existing journal with the key it was started with; the chain still verifies", async () => {
    const db = join(ws.dir, "shared.db");
    const first = await exec({ tool: "file_read", parameters: { path: "notes.txt" } }, [], db);
    const second = await exec({ tool: "file_list", parameters: { path: "." } }, [], db);
    expect(second.code).toBe(0);
    expect(second.json.key.keyId).toBe(first.json.key.keyId);
    expect(second.json.key.generatedAt).toBeUndefined();
    expect(second.json.journal.entries).toBeGreaterThan(first.json.journal.entries);
    expect(second.json.journal.verified).toBe(true);
  });
});

describe("warden exec: denials and refusals exit 1 and nothing runs", () => {
  it("denies reading the secret file (policy SENSITIVE_PATH); the secret never appears", async () => {
    const r = await exec({ tool: "file_read", parameters: { path: "secrets/api_key.txt" } });
    expect(r.code).toBe(1);
    expect(r.json.decision).toMatchObject({ decision: "deny", reasonCodes: ["SENSITIVE_PATH"] });
    expect(r.json).toMatchObject({ executed: false, result: null, evidence: null });
    expect(r.out).not.toContain(SECRET);
    expect(r.json.journal.verified).toBe(true);
  });

  it("denies sending out data once the call carries web taint; the collector receives nothing", async () => {
    const before = ws.collected.length;
    const r = await exec(
      {
        tool: "send_report",
        parameters: { text: "copied from the page" },
        taintLabels: [{ source: "web", origin: `${ws.origin}/pages/release-notes.html` }],
      },
      ["--allow-loopback"],
    );
    expect(r.code).toBe(1);
    expect(r.json.decision.decision).toBe("deny");
    expect(r.json.executed).toBe(false);
    expect(ws.collected.length).toBe(before);
  });

  it("sends an untainted report (allowed) — the control for the test above", async () => {
    const before = ws.collected.length;
    const r = await exec({ tool: "send_report", parameters: { text: "all good" } }, ["--allow-loopback"]);
    expect(r.code).toBe(0);
    expect(ws.collected.slice(before)).toEqual(['{"text":"all good"}']);
  });

  it("denies arguments the contract cannot express (traversal in a path) before policy", async () => {
    const r = await exec({ tool: "file_read", parameters: { path: "../outside/private.txt" } });
    expect(r.code).toBe(1);
    expect(r.json.decision.reasonCodes[0]).toMatch(/^contract_param_invalid:path:/);
    expect(r.json.executed).toBe(false);
  });

  it("denies a tool nobody declared (tool_unknown)", async () => {
    const r = await exec({ tool: "rm_rf", toolClass: "shell", action: "exec", parameters: {} });
    expect(r.code).toBe(1);
    expect(r.json.decision).toMatchObject({ decision: "deny", reasonCodes: ["tool_unknown"] });
  });

  it("reports an executor refusal after an allow: loopback without --allow-loopback is ERR_EXEC_SSRF_BLOCKED", async () => {
    const r = await exec({ tool: "fetch_page", parameters: { page: "welcome" } });
    expect(r.code).toBe(1);
    expect(r.json.decision.decision).toBe("allow");
    expect(r.json.result).toMatchObject({ ok: false, code: "ERR_EXEC_SSRF_BLOCKED" });
    expect(r.json.evidence).toMatchObject({ status: "rejected" });
  });

  it("reports an executor refusal for a symlink leaving the sandbox (ERR_EXEC_PATH_SYMLINK)", async () => {
    const r = await exec({ tool: "file_read", parameters: { path: "shortcut.txt" } });
    expect(r.code).toBe(1);
    expect(r.json.result).toMatchObject({ ok: false, code: "ERR_EXEC_PATH_SYMLINK" });
    expect(r.out).not.toContain("outside the sandbox");
  });
});

describe("warden exec: bad input exits 2", () => {
  it("refuses to relabel a POST contract as an http get (ERR_CLI_INPUT); nothing is sent", async () => {
    const before = ws.collected.length;
    const r = await exec(
      { tool: "send_report", toolClass: "http", action: "get", parameters: { text: "x" } },
      ["--allow-loopback"],
    );
    expect(r.code).toBe(2);
    expect(r.err).toContain("ERR_CLI_INPUT");
    expect(r.err).toContain("action get does not match tool send_report");
    expect(ws.collected.length).toBe(before);
  });

  it("refuses a call that names another principal than --principal", async () => {
    const r = await exec({ principalId: "admin", tool: "file_read", parameters: { path: "notes.txt" } });
    expect(r.code).toBe(2);
    expect(r.err).toContain("ERR_CLI_INPUT");
  });

  it("refuses a call without a tool, a non-object call, and unknown GateRequest keys", async () => {
    for (const call of [
      { toolClass: "file", action: "read", parameters: { path: "notes.txt" } },
      [1, 2],
      { tool: "file_read", parameters: { path: "notes.txt" }, sudo: true },
    ]) {
      const r = await exec(call);
      expect(r.code).toBe(2);
      expect(r.err).toContain("ERR_CLI_INPUT");
    }
  });

  it("refuses duplicate keys in the call file (strict JSON)", async () => {
    const r = await exec(
      '{"tool":"file_read","parameters":{"path":"notes.txt","path":"secrets/api_key.txt"}}',
    );
    expect(r.code).toBe(2);
    expect(r.err).toContain("ERR_JSON_DUPLICATE_KEY");
  });

  it("refuses a missing policy file and a group-readable key file", async () => {
    const call = ws.json("ok-call.json", { tool: "file_read", parameters: { path: "notes.txt" } });
    const noPolicy = await runCli(
      "exec",
      "--contracts",
      ws.contracts,
      "--policy",
      join(ws.dir, "nope.yaml"),
      "--call",
      call,
    );
    expect(noPolicy.code).toBe(2);
    expect(noPolicy.err).toContain("ERR_POLICY_FILE");

    const first = await exec({ tool: "file_read", parameters: { path: "notes.txt" } });
    chmodSync(`${first.db}.key.pem`, 0o644);
    const r = await exec({ tool: "file_read", parameters: { path: "notes.txt" } }, [
      "--key",
      `${first.db}.key.pem`,
    ]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/warden: ERR_CRYPTO_\w+/);
    expect(existsSync(r.db)).toBe(false);
  });

  it("refuses a --principal that the --config does not declare", async () => {
    const config = ws.json("gate.json", { principals: [{ id: "reader", roles: ["agent"] }] });
    const r = await exec({ tool: "file_read", parameters: { path: "notes.txt" } }, ["--config", config]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("ERR_CLI_USAGE");
    const ok = await exec({ tool: "file_read", parameters: { path: "notes.txt" } }, [
      "--config",
      config,
      "--principal",
      "reader",
    ]);
    expect(ok.code).toBe(0);
    expect(readFileSync(ok.db).subarray(0, 15).toString()).toBe("SQLite format 3");
  });
});
