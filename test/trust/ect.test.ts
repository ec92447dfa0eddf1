// ECTs at L1/L2/L3: emission, verification at a configured level (the L1 downgrade is
// refused and charged to the sender), and the L3 ledger's DAG validation.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generateKeyPair } from "../../src/crypto/index.js";
import { builtinEventTypes, type Journal, openJournal, SqliteJournalStore } from "../../src/journal/index.js";
import {
  ECT_LEDGER_EVENT,
  type EctClaims,
  EctEmitter,
  EctLedger,
  EctLedgerBodySchema,
  type EctVerifyOptions,
  ectClaims,
  ectHash,
  emitChange,
  encodeEct,
  ledgerToken,
  MemoryTrustStore,
  receiveEct,
  registerEctLedgerEventType,
  TrustEngine,
  validateDag,
  verifyEct,
} from "../../src/trust/index.js";

const NOW = Date.parse("2026-03-01T12:00:00Z");
const AGENT = generateKeyPair("p256");
const OTHER = generateKeyPair("p256");
const SIGNER = { kid: "agent-a-1", privateKey: AGENT.privateKey };

const keys: EctVerifyOptions["keys"] = (iss, kid) =>
  iss === "spiffe://example.com/agent/a" && kid === "agent-a-1" ? AGENT.publicKey : undefined;
const opts = (level: EctVerifyOptions["level"]): EctVerifyOptions => ({
  level,
  keys,
  sender: "peer-x",
  now: NOW,
});

function claims(over: Partial<EctClaims> = {}): EctClaims {
  return {
    ...ectClaims(
      { exec_act: "read_config", aud: "spiffe://example.com/agent/c", inp_hash: ectHash("in") },
      "spiffe://example.com/agent/a",
      NOW,
    ),
    ...over,
  };
}

describe("ECT emission and verification", () => {
  it("an L2 token verifies with the issuer's key and keeps every claim", async () => {
    const c = claims({
      pol: "policy-7",
      pol_decision: "allow",
      out_hash: ectHash("out"),
      ext: { "apae.subject": "b" },
    });
    const v = await verifyEct(await encodeEct(c, "L2", SIGNER), opts("L2"));
    expect(v).toEqual({ ok: true, claims: c, signed: true, kid: "agent-a-1" });
  });

  it("an unsigned L1 token is accepted where L1 is configured", async () => {
    const token = await encodeEct(claims(), "L1");
    expect(token.endsWith(".")).toBe(true);
    expect(await verifyEct(token, opts("L1"))).toMatchObject({ ok: true, signed: false, kid: null });
  });

  it("an unsigned (alg none) token is refused where L2 or L3 is configured: a downgrade is attestation_invalid", async () => {
    const token = await encodeEct(claims(), "L1");
    for (const level of ["L2", "L3"] as const) {
      expect(await verifyEct(token, opts(level))).toEqual({
        ok: false,
        code: "ERR_TRUST_ECT_UNSIGNED",
        message: `an unsigned ECT where ${level} is required`,
        trustEvent: { subject: "peer-x", event: "attestation_invalid" },
      });
    }
  });

  it("a signed token stripped of its signature and relabelled alg none is refused at L2", async () => {
    const [, payload] = (await encodeEct(claims(), "L2", SIGNER)).split(".");
    const header = Buffer.from(JSON.stringify({ alg: "none", typ: "wimse-exec+jwt" })).toString("base64url");
    expect(await verifyEct(`${header}.${payload}.`, opts("L2"))).toMatchObject({
      ok: false,
      code: "ERR_TRUST_ECT_UNSIGNED",
    });
  });

  it("a token signed by another key is attestation_invalid, charged to the sender, not to the iss it names", async () => {
    const forged = await encodeEct(claims(), "L2", { kid: "agent-a-1", privateKey: OTHER.privateKey });
    for (const level of ["L1", "L2"] as const) {
      expect(await verifyEct(forged, opts(level))).toMatchObject({
        ok: false,
        code: "ERR_TRUST_ECT_SIGNATURE_INVALID",
        trustEvent: { subject: "peer-x", event: "attestation_invalid" },
      });
    }
  });

  it("a tampered payload fails the signature", async () => {
    const [h, , s] = (await encodeEct(claims(), "L2", SIGNER)).split(".");
    const p = Buffer.from(JSON.stringify(claims({ exec_act: "update_rules" }))).toString("base64url");
    expect(await verifyEct(`${h}.${p}.${s}`, opts("L2"))).toMatchObject({
      code: "ERR_TRUST_ECT_SIGNATURE_INVALID",
    });
  });

  it("an HS256 token (algorithm confusion) is refused", async () => {
    const [, p] = (await encodeEct(claims(), "L2", SIGNER)).split(".");
    const h = Buffer.from(JSON.stringify({ alg: "HS256", typ: "wimse-exec+jwt", kid: "agent-a-1" })).toString(
      "base64url",
    );
    expect(await verifyEct(`${h}.${p}.c2ln`, opts("L2"))).toMatchObject({
      code: "ERR_TRUST_ECT_SIGNATURE_INVALID",
    });
  });

  it("an unknown key, an expired token and a token for another audience are refused with their codes", async () => {
    const stranger = await encodeEct(claims({ iss: "spiffe://evil/agent" }), "L2", SIGNER);
    expect(await verifyEct(stranger, opts("L2"))).toMatchObject({
      code: "ERR_TRUST_ECT_KEY_UNKNOWN",
      trustEvent: null,
    });
    const old = await encodeEct(claims({ iat: NOW / 1000 - 7200, exp: NOW / 1000 - 3600 }), "L2", SIGNER);
    expect(await verifyEct(old, opts("L2"))).toMatchObject({ code: "ERR_TRUST_ECT_EXPIRED" });
    const token = await encodeEct(claims(), "L2", SIGNER);
    expect(await verifyEct(token, { ...opts("L2"), audience: "spiffe://example.com/agent/z" })).toMatchObject(
      {
        code: "ERR_TRUST_ECT_MALFORMED",
      },
    );
  });

  it("malformed tokens are refused, never thrown", async () => {
    for (const t of ["", "a.b", "a.b.c.d", "x".repeat(20_000), "eyJ9.eyJ9.", 42 as unknown as string]) {
      expect(await verifyEct(t, opts("L1"))).toMatchObject({ ok: false, code: "ERR_TRUST_ECT_MALFORMED" });
    }
  });

  it("claims that break the schema are not encoded (pol without pol_decision, exp before iat, self-parent)", async () => {
    const c = claims();
    for (const bad of [{ pol: "p" }, { exp: c.iat }, { par: [c.jti] }]) {
      await expect(encodeEct({ ...c, ...bad }, "L1")).rejects.toMatchObject({
        code: "ERR_TRUST_ECT_MALFORMED",
      });
    }
  });

  it("L2 and L3 emitters refuse to start without a P-256 key", async () => {
    expect(() => new EctEmitter({ level: "L2", issuer: "a" })).toThrowError(
      expect.objectContaining({ code: "ERR_TRUST_ECT_SIGNER_MISSING" }),
    );
    const ed = generateKeyPair("ed25519");
    await expect(encodeEct(claims(), "L2", { kid: "k", privateKey: ed.privateKey })).rejects.toMatchObject({
      code: "ERR_TRUST_ECT_SIGNER_MISSING",
    });
  });
});

describe("DAG validation", () => {
  const n = (jti: string, iat: number, par: string[] = []) => ({ jti, iat, par });
  const none = () => undefined;

  it("accepts a DAG and orders parents before children", () => {
    const r = validateDag([n("c", 3, ["a", "b"]), n("b", 2, ["a"]), n("a", 1)], none);
    expect(r.ok && r.order.map((x) => x.jti)).toEqual(["a", "b", "c"]);
  });
  it("refuses a dangling par", () => {
    expect(validateDag([n("a", 1, ["ghost"])], none)).toMatchObject({
      ok: false,
      code: "ERR_TRUST_ECT_PARENT_UNKNOWN",
      jti: "a",
    });
  });
  it("refuses a cycle", () => {
    expect(validateDag([n("a", 1, ["b"]), n("b", 1, ["a"])], none)).toMatchObject({
      ok: false,
      code: "ERR_TRUST_ECT_CYCLE",
    });
  });
  it("refuses a child issued before its parent", () => {
    expect(validateDag([n("a", 5), n("b", 4, ["a"])], none)).toMatchObject({
      code: "ERR_TRUST_ECT_TIME_ORDER",
      jti: "b",
    });
    expect(validateDag([n("b", 4, ["a"])], (j) => (j === "a" ? 5 : undefined))).toMatchObject({
      code: "ERR_TRUST_ECT_TIME_ORDER",
    });
  });
  it("refuses a jti recorded twice", () => {
    expect(validateDag([n("a", 1), n("a", 2)], none)).toMatchObject({ code: "ERR_TRUST_ECT_DUPLICATE" });
    expect(validateDag([n("a", 1)], () => 1)).toMatchObject({ code: "ERR_TRUST_ECT_DUPLICATE" });
  });
});

async function journalAt(dir: string): Promise<Journal> {
  const registry = builtinEventTypes();
  registerEctLedgerEventType(registry);
  return openJournal({
    store: SqliteJournalStore.open(join(dir, "j.db")),
    signer: generateKeyPairEd,
    registry,
  });
}
const generateKeyPairEd = generateKeyPair("ed25519");

describe("L3: the audit ledger", () => {
  it("an L3 emitter signs, validates the DAG and appends each ECT to the journal", async () => {
    const dir = mkdtempSync(join(tmpdir(), "warden-ect-"));
    const journal = await journalAt(dir);
    const ledger = await EctLedger.open(journal);
    let now = NOW;
    const emitter = new EctEmitter({
      level: "L3",
      issuer: "spiffe://example.com/agent/a",
      key: SIGNER,
      ledger,
      clock: () => now,
    });
    const root = await emitter.emit({ exec_act: "read_config", aud: "c" });
    now += 1000;
    const child = await emitter.emit({ exec_act: "report", aud: "c", par: [root.claims.jti] });
    expect(await ledger.has(child.claims.jti)).toBe(true);
    await expect(
      emitter.emit({ exec_act: "report", aud: "c", par: ["never-emitted"] }),
    ).rejects.toMatchObject({
      code: "ERR_TRUST_ECT_PARENT_UNKNOWN",
    });
    const entries = await journal.store.query({ type: ECT_LEDGER_EVENT });
    expect(entries.map((e) => e.body.jti)).toEqual([root.claims.jti, child.claims.jti]);
    const stored = EctLedgerBodySchema.parse(entries[1]?.body);
    expect(ledgerToken(stored)).toBe(child.token);
    expect((await verifyEct(ledgerToken(stored), { ...opts("L3"), now: NOW + 1000 })).ok).toBe(true);
    await journal.close();

    // Reopened: the index comes back from the journal, so a replayed jti is refused.
    const again = await journalAt(dir);
    const reopened = await EctLedger.open(again);
    expect(await reopened.append([{ token: child.token, claims: child.claims }])).toMatchObject({
      code: "ERR_TRUST_ECT_DUPLICATE",
    });
    await again.close();
  });

  it("two concurrent appends of one jti: one is recorded, the other refused as a duplicate", async () => {
    const journal = await journalAt(mkdtempSync(join(tmpdir(), "warden-ect-")));
    const ledger = await EctLedger.open(journal);
    const c = claims();
    const item = { token: await encodeEct(c, "L2", SIGNER), claims: c };
    const results = await Promise.all([ledger.append([item]), ledger.append([item])]);
    expect(results.map((r) => (r.ok ? "ok" : r.code)).sort()).toEqual(["ERR_TRUST_ECT_DUPLICATE", "ok"]);
    expect(await journal.store.count()).toBe(1);
    await journal.close();
  });

  it("a ledger whose journal failed an append refuses everything afterwards (fail closed)", async () => {
    const journal = await journalAt(mkdtempSync(join(tmpdir(), "warden-ect-")));
    const ledger = await EctLedger.open(journal);
    await journal.close();
    const c = claims();
    await expect(
      ledger.append([{ token: await encodeEct(c, "L2", SIGNER), claims: c }]),
    ).rejects.toMatchObject({
      code: "ERR_JOURNAL_CLOSED",
    });
    const d = claims();
    await expect(
      ledger.append([{ token: await encodeEct(d, "L2", SIGNER), claims: d }]),
    ).rejects.toMatchObject({
      code: "ERR_TRUST_LEDGER_FAILED",
    });
  });

  it("an L3 emitter without a ledger does not start", () => {
    expect(() => new EctEmitter({ level: "L3", issuer: "a", key: SIGNER })).toThrowError(
      expect.objectContaining({ code: "ERR_TRUST_CONFIG_INVALID" }),
    );
  });

  it("a batch with a cycle appends nothing", async () => {
    const journal = await journalAt(mkdtempSync(join(tmpdir(), "warden-ect-")));
    const ledger = await EctLedger.open(journal);
    const a = claims({ jti: "a", par: ["b"] });
    const b = claims({ jti: "b", par: ["a"] });
    const res = await ledger.append([
      { token: await encodeEct(a, "L2", SIGNER), claims: a },
      { token: await encodeEct(b, "L2", SIGNER), claims: b },
    ]);
    expect(res).toMatchObject({ ok: false, code: "ERR_TRUST_ECT_CYCLE" });
    expect(await journal.store.count()).toBe(0);
    await journal.close();
  });
});

describe("protocol ECTs from the engine", () => {
  it("a quarantine becomes a signed apae:quarantine ECT whose claims are the engine's, parented on the causing ECT", async () => {
    const engine = new TrustEngine({ store: new MemoryTrustStore(), clock: () => NOW });
    await engine.apply({ subject: "b", event: "policy_violation", ect: "e-1" });
    await engine.apply({ subject: "b", event: "policy_violation", ect: "e-2" });
    const change = await engine.apply({ subject: "b", event: "policy_violation", ect: "e-3" });
    const emitter = new EctEmitter({
      level: "L2",
      issuer: "spiffe://example.com/agent/a",
      key: SIGNER,
      clock: () => NOW,
    });
    const tokens = await emitChange(emitter, change, "spiffe://example.com/peers");
    expect(tokens.map((t) => t.claims.exec_act)).toEqual(["apae:trust_revoke", "apae:quarantine"]);
    const v = await verifyEct(tokens[1]?.token ?? "", opts("L2"));
    expect(v.ok && v.claims.par).toEqual(["e-3"]);
    expect(v.ok && v.claims.ext).toMatchObject({
      "apae.subject": "b",
      "apae.score": 0.131072,
      "apae.threshold": 0.15,
      "apae.to_state": "quarantined",
      "apae.quarantine_until": new Date(NOW + 3_600_000).toISOString(),
    });
  });
});

describe("receiving ECTs", () => {
  it("a forged ECT costs its sender attestation_invalid (x0.64), not the agent it names as iss", async () => {
    const engine = new TrustEngine({ store: new MemoryTrustStore(), clock: () => NOW });
    const forged = await encodeEct(claims(), "L2", { kid: "agent-a-1", privateKey: OTHER.privateKey });
    const r = await receiveEct(engine, forged, opts("L2"));
    expect(r.verification).toMatchObject({ ok: false, code: "ERR_TRUST_ECT_SIGNATURE_INVALID" });
    expect(r.change?.steps[0]).toMatchObject({ kind: "attestation_invalid", before: 0.5, after: 0.32 });
    expect((await engine.view("peer-x")).score).toBe(0.32);
    expect((await engine.view("spiffe://example.com/agent/a")).score).toBe(0.5);
  });

  it("an unsigned ECT sent where L2 is configured is charged too; a valid one changes nothing", async () => {
    const engine = new TrustEngine({ store: new MemoryTrustStore(), clock: () => NOW });
    expect((await receiveEct(engine, await encodeEct(claims(), "L1"), opts("L2"))).change?.view.score).toBe(
      0.32,
    );
    const good = await receiveEct(engine, await encodeEct(claims(), "L2", SIGNER), {
      ...opts("L2"),
      sender: "peer-y",
    });
    expect(good).toMatchObject({ verification: { ok: true }, change: null });
    expect(await engine.store.list()).toHaveLength(1);
  });
});
