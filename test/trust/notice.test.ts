// Quarantine notices from peers and the broadcast list (assertion recipients) in the store.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type EctClaims,
  ectClaims,
  HOUR_MS,
  MemoryTrustStore,
  receiveQuarantineNotice,
  SqliteTrustStore,
  TrustEngine,
} from "../../src/trust/index.js";

const T0 = Date.parse("2026-03-01T12:00:00Z");

function claims(subject: string, until: number, over: Partial<EctClaims> = {}): EctClaims {
  return {
    ...ectClaims(
      {
        exec_act: "apae:quarantine",
        aud: "me",
        ext: {
          "apae.subject": subject,
          "apae.to_state": "quarantined",
          "apae.quarantine_until": new Date(until).toISOString(),
        },
      },
      "peer-a",
      T0,
    ),
    ...over,
  };
}

describe("quarantine notices", () => {
  it("a peer's notice quarantines the subject until the peer's time, then it recovers", async () => {
    let now = T0;
    const engine = new TrustEngine({ store: new MemoryTrustStore(), clock: () => now });
    const r = await receiveQuarantineNotice(engine, {
      claims: claims("agent-x", T0 + 2 * HOUR_MS),
      signed: true,
    });
    expect(r.ok).toBe(true);
    expect(await engine.view("agent-x")).toMatchObject({
      status: "quarantined",
      quarantineUntil: T0 + 2 * HOUR_MS,
      quarantineCount: 0,
    });
    now = T0 + 2 * HOUR_MS;
    expect(await engine.view("agent-x")).toMatchObject({ status: "active", score: 0.5 });
  });

  it("a later notice with an earlier end cannot shorten a quarantine", async () => {
    const engine = new TrustEngine({ store: new MemoryTrustStore(), clock: () => T0 });
    await receiveQuarantineNotice(engine, { claims: claims("agent-x", T0 + 4 * HOUR_MS), signed: true });
    const r = await receiveQuarantineNotice(engine, {
      claims: claims("agent-x", T0 + HOUR_MS),
      signed: true,
    });
    expect(r.ok && r.change.steps[0]?.note).toMatch(/already quarantined/);
    expect((await engine.view("agent-x")).quarantineUntil).toBe(T0 + 4 * HOUR_MS);
  });

  it("unsigned, self-serving, misdirected or already-ended notices are refused", async () => {
    const engine = new TrustEngine({ store: new MemoryTrustStore(), clock: () => T0 });
    const until = T0 + HOUR_MS;
    const refused = [
      { claims: claims("agent-x", until), signed: false },
      { claims: claims("peer-a", until), signed: true },
      { claims: claims("deployment", until), signed: true },
      { claims: claims("agent-x", T0 - 1), signed: true },
      { claims: claims("agent-x", until, { exec_act: "apae:trust_revoke" }), signed: true },
    ];
    for (const n of refused) {
      const r = await receiveQuarantineNotice(engine, n);
      expect(r.ok).toBe(false);
    }
    expect(await engine.store.list()).toEqual([]);
  });
});

describe("assertion recipients", () => {
  it("the broadcast list survives a restart of the SQLite store", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "warden-recip-")), "t.db");
    const s1 = SqliteTrustStore.open(path);
    await s1.addRecipient("agent-a", "peer-2");
    await s1.addRecipient("agent-a", "peer-1");
    await s1.addRecipient("agent-a", "peer-1");
    await s1.close();
    const s2 = SqliteTrustStore.open(path);
    expect(await s2.recipients("agent-a")).toEqual(["peer-1", "peer-2"]);
    expect(await s2.recipients("agent-b")).toEqual([]);
    await s2.close();
  });
});
