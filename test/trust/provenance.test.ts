// Provenance over a multi-agent ECT DAG in a real L3 ledger, and `warden provenance`.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generateKeyPair } from "../../src/crypto/index.js";
import { builtinEventTypes, openJournal, SqliteJournalStore } from "../../src/journal/index.js";
import {
  EctEmitter,
  EctLedger,
  ectClaims,
  ectHash,
  missingProvenance,
  provenanceOf,
  registerEctLedgerEventType,
} from "../../src/trust/index.js";
import { runCli } from "../helpers/cli.js";

const T0 = Date.parse("2026-03-01T12:00:00Z");
const RAW = ectHash("patients table rows");
const ANON = ectHash("anonymized rows");
const REPORT = ectHash("report");

async function pipeline() {
  const dir = mkdtempSync(join(tmpdir(), "warden-prov-"));
  const registry = builtinEventTypes();
  registerEctLedgerEventType(registry);
  const path = join(dir, "j.db");
  const journal = await openJournal({
    store: SqliteJournalStore.open(path),
    signer: generateKeyPair("ed25519"),
    registry,
  });
  const ledger = await EctLedger.open(journal);
  let t = T0;
  const agent = (issuer: string) =>
    new EctEmitter({
      level: "L3",
      issuer,
      key: { kid: issuer, privateKey: generateKeyPair("p256").privateKey },
      ledger,
      clock: () => (t += 1000),
    });
  const collect = await agent("collector").emit({
    exec_act: "read_records",
    aud: "pipeline",
    out_hash: RAW,
    ext: {
      "apae.data_source": "database:patients",
      "apae.data_classification": "pii",
      "apae.retention_days": 365,
      "apae.transformations": [],
    },
  });
  const other = await agent("auditor").emit({ exec_act: "read_config", aud: "pipeline" });
  const anon = await agent("anonymizer").emit({
    exec_act: "anonymize",
    aud: "pipeline",
    par: [collect.claims.jti],
    inp_hash: RAW,
    out_hash: ANON,
    ext: {
      "apae.data_source": "database:patients",
      "apae.data_classification": "internal",
      "apae.retention_days": 30,
      "apae.transformations": ["anonymize", "aggregate"],
    },
  });
  const report = await agent("reporter").emit({
    exec_act: "report",
    aud: "pipeline",
    par: [anon.claims.jti, other.claims.jti],
    inp_hash: ANON,
    out_hash: REPORT,
  });
  await journal.close();
  return { path, collect, anon, report };
}

describe("provenance over a multi-agent DAG", () => {
  it("a report's data names every agent upstream, the transformation and a complete chain", async () => {
    const p = await pipeline();
    const r = await runCli("provenance", REPORT, "--journal", p.path, "--json");
    expect(r.code).toBe(0);
    const a = JSON.parse(r.out);
    expect(a).toMatchObject({
      matched: "data",
      agents: ["anonymizer", "auditor", "collector", "reporter"],
      transformed: true,
      complete: true,
      missing: [],
      sources: ["database:patients"],
    });
    expect(a.chain.map((n: { iss: string }) => n.iss)).toEqual([
      "collector",
      "auditor",
      "anonymizer",
      "reporter",
    ]);
  });

  it("the raw data's own ECT has one agent and no transformation", async () => {
    const p = await pipeline();
    const r = await runCli("provenance", p.collect.claims.jti, "--journal", p.path);
    expect(r.code).toBe(0);
    expect(r.out).toContain("agents       collector\ntransformed  no\ncomplete     yes");
  });

  it("a query that matches nothing exits 1", async () => {
    const p = await pipeline();
    const r = await runCli("provenance", ectHash("never seen"), "--journal", p.path, "--json");
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toMatchObject({ matched: "none", complete: false });
  });

  it("a chain with a parent the ledger does not hold is reported incomplete, naming it", () => {
    const c = (jti: string, par: string[]) => ({
      ...ectClaims({ exec_act: "x", aud: "a", par }, "agent", T0),
      jti,
    });
    const a = provenanceOf([c("a", []), c("b", ["a"]), c("c", ["b", "lost"])], "c");
    expect(a).toMatchObject({ matched: "ect", complete: false, missing: ["lost"], agents: ["agent"] });
  });

  it("a data-transforming ECT without provenance claims is flagged (required at Regulated)", () => {
    expect(missingProvenance({ ext: { "apae.data_source": "db" } })).toEqual([
      "apae.data_classification",
      "apae.retention_days",
      "apae.transformations",
    ]);
    expect(
      missingProvenance({
        ext: {
          "apae.data_source": "db",
          "apae.data_classification": "pii",
          "apae.retention_days": 1,
          "apae.transformations": ["x"],
        },
      }),
    ).toEqual([]);
  });
});
