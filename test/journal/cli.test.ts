import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/contracts/index.js";
import { generateKeyPair, loadPrivateKeyFile, saveKeyPair } from "../../src/crypto/index.js";
import { openJournal, SqliteJournalStore } from "../../src/journal/index.js";
import { runCli } from "../helpers/cli.js";
import { gateDecision, KEY, policyDecision, tempDir } from "./helpers.js";

let t: ReturnType<typeof tempDir>;
let db: string;
let priv: string;
let pub: string;
let otherPub: string;

beforeAll(async () => {
  t = tempDir("warden-journal-cli-");
  db = join(t.dir, "j.db");
  const files = saveKeyPair(generateKeyPair("ed25519"), t.dir, { name: "journal" });
  priv = files.privatePem;
  pub = files.publicPem;
  otherPub = saveKeyPair(generateKeyPair("ed25519"), t.dir, { name: "other" }).publicPem;
  const override = JSON.stringify({
    operator: "alice",
    action: "release_quarantine",
    reason: "false positive, ticket OPS-12",
  });
  expect(
    (
      await runCli(
        "journal",
        "append",
        "--db",
        db,
        "--key",
        priv,
        "--type",
        "warden.operator.override",
        "--body",
        override,
        "--run",
        "run-1",
      )
    ).code,
  ).toBe(0);
  for (let i = 0; i < 3; i++) {
    const r = await runCli(
      "journal",
      "append",
      "--db",
      db,
      "--key",
      priv,
      "--type",
      "ObservationsCollected",
      "--body",
      `{"observation_count":${i}}`,
    );
    expect(r.out).toMatch(new RegExp(`^appended seq ${i + 2} sha256:[0-9a-f]{64}\\n$`));
  }
});
afterAll(() => t.cleanup());

describe("warden journal append", () => {
  it("schema-checks known types (exit 2, ERR_JOURNAL_BODY_INVALID) and accepts unknown ones", async () => {
    const bad = await runCli(
      "journal",
      "append",
      "--db",
      db,
      "--key",
      priv,
      "--type",
      "warden.operator.override",
      "--body",
      '{"operator":"bob"}',
    );
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/ERR_JOURNAL_BODY_INVALID/);
    const custom = await runCli(
      "journal",
      "append",
      "--db",
      db,
      "--key",
      priv,
      "--type",
      "acme.ticket",
      "--body",
      '{"id":"OPS-12"}',
      "--json",
    );
    expect(custom.code).toBe(0);
    expect(JSON.parse(custom.out)).toMatchObject({ seq: 5, type: "acme.ticket", body: { id: "OPS-12" } });
  });

  it.each([
    [["--body", "[1]"], "ERR_CLI_INPUT"],
    [["--body", '{"a":1,"a":2}'], "ERR_CLI_INPUT"],
    [["--body", "@/nonexistent/body.json"], "ERR_CLI_INPUT"],
    [["--body", "{}", "--trace", "xyz"], "ERR_JOURNAL_ENTRY_INVALID"],
  ])("refuses %j with %s", async (extra, code) => {
    const r = await runCli("journal", "append", "--db", db, "--key", priv, "--type", "acme.ticket", ...extra);
    expect(r.code).toBe(2);
    expect(r.err).toContain(code);
  });

  it("masks a credential an operator pastes into a body", async () => {
    const r = await runCli(
      "journal",
      "append",
      "--db",
      db,
      "--key",
      priv,
      "--type",
      "warden.operator.note",
      "--body",
      JSON.stringify({ operator: "bob", note: "rotated token ghp_16C7e42F292c6912E7710c838347Ae178B4a" }),
      "--json",
    );
    expect(r.code).toBe(0);
    expect(r.out).not.toContain("ghp_16C7e42F");
    expect(r.out).toContain("[REDACTED:github_token]");
  });
});

describe("warden journal verify / export / head", () => {
  it("verifies the database and its JSONL export (exit 0)", async () => {
    const ok = await runCli("journal", "verify", "--db", db, "--keys", pub);
    expect(ok).toMatchObject({ code: 0 });
    expect(ok.out).toMatch(/^journal intact: 6 entries, head seq 6 sha256:/);
    const exp = await runCli("journal", "export", "--db", db, "--format", "jsonl");
    expect(exp.code).toBe(0);
    expect(exp.out.trimEnd().split("\n")).toHaveLength(6);
    const file = join(t.dir, "export.jsonl");
    writeFileSync(file, exp.out);
    const fromFile = await runCli(
      "journal",
      "verify",
      "--db",
      file,
      "--keys",
      pub,
      "--json",
      "--workers",
      "2",
    );
    expect(fromFile.code).toBe(0);
    expect(JSON.parse(fromFile.out)).toMatchObject({ ok: true, checked: 6 });
    const out2 = join(t.dir, "export2.jsonl");
    expect((await runCli("journal", "export", "--db", db, "--format", "jsonl", "--out", out2)).code).toBe(0);
    expect(readFileSync(out2, "utf8")).toBe(exp.out);
  });

  it("exits 1 with the first failure for a tampered export or the wrong key", async () => {
    const exp = (await runCli("journal", "export", "--db", db, "--format", "jsonl")).out.split("\n");
    exp[2] = exp[2]!.replace('"observation_count":1', '"observation_count":2');
    const file = join(t.dir, "tampered.jsonl");
    writeFileSync(file, exp.join("\n"));
    const r = await runCli("journal", "verify", "--db", file, "--keys", pub);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/FAILED at seq 3: hash_mismatch/);
    const json = await runCli("journal", "verify", "--db", file, "--keys", pub, "--json");
    expect(JSON.parse(json.out)).toMatchObject({
      ok: false,
      checked: 2,
      failure: { seq: 3, reason: "hash_mismatch" },
    });
    const wrong = await runCli("journal", "verify", "--db", db, "--keys", otherPub);
    expect(wrong.code).toBe(1);
    expect(wrong.out).toMatch(/seq 1: unknown_key/);
  });

  it("verifies a batch-signed journal and its export, and names a tampered proof (exit 1)", async () => {
    const path = join(t.dir, "batch.db");
    const store = SqliteJournalStore.open(path);
    const j = await openJournal({ store, signer: loadPrivateKeyFile(priv), signatureMode: "batch" });
    await Promise.all(
      Array.from({ length: 9 }, (_, i) =>
        j.append({ type: "ObservationsCollected", body: { observation_count: i } }),
      ),
    );
    await j.close();
    await store.close();
    const ok = await runCli("journal", "verify", "--db", path, "--keys", pub, "--json");
    expect(JSON.parse(ok.out)).toMatchObject({ ok: true, checked: 9 });
    const exp = (await runCli("journal", "export", "--db", path, "--format", "jsonl")).out
      .trimEnd()
      .split("\n");
    const e = JSON.parse(exp[4]!) as { signature: string };
    const parts = e.signature.split(".");
    // Swap two path elements: the fold leads to another root.
    [parts[4], parts[5]] = [parts[5]!, parts[4]!];
    exp[4] = canonicalJson({ ...e, signature: parts.join(".") });
    const file = join(t.dir, "batch-tampered.jsonl");
    writeFileSync(file, `${exp.join("\n")}\n`);
    const r = await runCli("journal", "verify", "--db", file, "--keys", pub);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/FAILED at seq 5: signature_invalid/);
  });

  it("detects truncation against a signed head", async () => {
    const headFile = join(t.dir, "head.json");
    const h = await runCli("journal", "head", "--db", db, "--key", priv, "--out", headFile);
    expect(h.code).toBe(0);
    expect(JSON.parse(h.out)).toMatchObject({ kind: "warden.journal.head", seq: 6 });
    const lines = (await runCli("journal", "export", "--db", db, "--format", "jsonl")).out
      .trimEnd()
      .split("\n");
    const cut = join(t.dir, "cut.jsonl");
    writeFileSync(cut, `${lines.slice(0, 4).join("\n")}\n`);
    expect((await runCli("journal", "verify", "--db", cut, "--keys", pub)).code).toBe(0);
    const r = await runCli("journal", "verify", "--db", cut, "--keys", pub, "--expect-head", headFile);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/FAILED at seq 5: truncated/);
    const full = await runCli("journal", "verify", "--db", db, "--keys", pub, "--expect-head", headFile);
    expect(full.code).toBe(0);
  });

  it.each([
    [["journal", "verify", "--db", "DB"], "ERR_CLI_USAGE"],
    [["journal", "verify", "--db", "DB", "--keys", "PUB", "--workers", "-1"], "ERR_CLI_USAGE"],
    [["journal", "verify", "--db", "/nonexistent.db", "--keys", "PUB"], "ERR_CLI_INPUT"],
    [["journal", "export", "--db", "DB", "--format", "csv"], "ERR_CLI_USAGE"],
    [["journal", "show", "--db", "DB", "--limit", "0"], "ERR_CLI_USAGE"],
    [["journal", "show", "--db", "DB", "--since", "last tuesday"], "ERR_CLI_USAGE"],
    [["journal", "show", "--db", "/nonexistent.db"], "ERR_JOURNAL_STORE"],
  ])("refuses %j with %s (exit 2)", async (args, code) => {
    const r = await runCli(...args.map((a) => (a === "DB" ? db : a === "PUB" ? pub : a)));
    expect(r.code).toBe(2);
    expect(r.err).toContain(code);
  });
});

describe("warden journal show", () => {
  it("shows the decision of warden.gate.decision entries (body.decision) in the DECISION column", async () => {
    const own = tempDir("warden-journal-cli-show-");
    try {
      const path = join(own.dir, "j.db");
      const store = SqliteJournalStore.open(path);
      const j = await openJournal({ store, signer: KEY });
      await j.append({ type: "warden.gate.decision", run_id: "run-g", body: gateDecision("step_up") });
      await j.append({ type: "warden.gate.decision", run_id: "run-g", body: gateDecision("modify") });
      await j.append({ type: "dare.policy.decision", run_id: "run-g", body: policyDecision("deny") });
      await j.append({ type: "ObservationsCollected", run_id: "run-g", body: { observation_count: 1 } });
      await store.close();
      const r = await runCli("journal", "show", "--db", path);
      expect(r.code).toBe(0);
      const rows = r.out.trimEnd().split("\n");
      expect(rows).toHaveLength(5);
      expect(rows[1]).toMatch(/^1\s+\S+\s+warden\.gate\.decision\s+run-g\s+step_up\s+/);
      expect(rows[2]).toMatch(/^2\s+\S+\s+warden\.gate\.decision\s+run-g\s+modify\s+/);
      expect(rows[3]).toMatch(/^3\s+\S+\s+dare\.policy\.decision\s+run-g\s+deny\s+/);
      // No decision: the column is blank, the key id follows the run id.
      expect(rows[4]).toMatch(/^4\s+\S+\s+ObservationsCollected\s+run-g\s+\S+\s+\S+$/);
      // The column agrees with the store's --decision filter.
      const filtered = await runCli("journal", "show", "--db", path, "--decision", "step_up");
      const cells = (row: string | undefined) => row?.split(/\s+/);
      expect(filtered.out.trimEnd().split("\n").slice(1).map(cells)).toEqual([cells(rows[1])]);
    } finally {
      own.cleanup();
    }
  });

  it("prints a table filtered by run and type, and JSON", async () => {
    const all = await runCli("journal", "show", "--db", db);
    expect(all.code).toBe(0);
    const rows = all.out.trimEnd().split("\n");
    expect(rows[0]).toMatch(/^SEQ\s+TIME\s+TYPE\s+RUN\s+DECISION\s+KEY\s+HASH$/);
    expect(rows).toHaveLength(7);
    const run = await runCli("journal", "show", "--db", db, "--run", "run-1");
    expect(run.out).toMatch(/\n1\s+\S+\s+warden\.operator\.override\s+run-1/);
    expect(run.out.trimEnd().split("\n")).toHaveLength(2);
    const json = await runCli(
      "journal",
      "show",
      "--db",
      db,
      "--type",
      "ObservationsCollected",
      "--limit",
      "2",
      "--json",
    );
    expect((JSON.parse(json.out) as { seq: number }[]).map((e) => e.seq)).toEqual([3, 4]);
    const none = await runCli("journal", "show", "--db", db, "--since", "2999-01-01T00:00:00Z");
    expect(none.out).toBe("no entries\n");
  });
});
