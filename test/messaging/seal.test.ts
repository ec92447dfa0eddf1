// Sealed inter-agent messages: every refusal is an attack with its coded answer, and a
// property: open(seal(m)) = m, and any single-bit flip of the wire text is refused.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, type JsonValue, MessagingError } from "../../src/contracts/index.js";
import {
  generateMessagingKeys,
  IdentityDirectory,
  MemoryNonceStore,
  type MessagingKeys,
  open,
  openText,
  type SealedMessage,
  SqliteNonceStore,
  seal,
} from "../../src/messaging/index.js";

const NOW = Date.parse("2026-01-01T10:00:00.000Z");

function world() {
  const planner = generateMessagingKeys("planner");
  const executor = generateMessagingKeys("executor");
  const mallory = generateMessagingKeys("mallory");
  const directory = new IdentityDirectory();
  for (const k of [planner, executor, mallory]) directory.register(k.id, k);
  const nonces = new MemoryNonceStore();
  const opts = (now = NOW) => ({ directory, nonces, now });
  const send = (payload: JsonValue = { task: "summarise the report" }, from: MessagingKeys = planner) =>
    seal(
      { recipient: "executor", primitive: "delegate", payloadType: "delegate_task", payload },
      from,
      executor,
      NOW,
    );
  return { planner, executor, mallory, directory, nonces, opts, send };
}

function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    if (err instanceof MessagingError) return err.code;
    throw err;
  }
  return "opened";
}

const flipB64 = (s: string): string => {
  const b = Buffer.from(s, "base64url");
  b[0] = b[0]! ^ 1;
  return b.toString("base64url");
};

describe("sealed messages", () => {
  it("round-trips a payload to its recipient", () => {
    const w = world();
    const m = w.send({ task: "x", n: 1 });
    const got = open(m, w.executor, w.opts());
    expect(got.payload).toEqual({ task: "x", n: 1 });
    expect(got.header).toMatchObject({ sender: "planner", recipient: "executor", primitive: "delegate" });
  });

  it("keeps the payload confidential: the plaintext is nowhere on the wire", () => {
    const w = world();
    const m = w.send({ secret: "the-launch-code-42" });
    expect(JSON.stringify(m)).not.toContain("launch-code");
  });

  it("an attacker who flips a ciphertext bit is refused (ERR_MESSAGE_TAMPERED)", () => {
    const w = world();
    const m = w.send();
    expect(codeOf(() => open({ ...m, ciphertext: flipB64(m.ciphertext) }, w.executor, w.opts()))).toBe(
      "ERR_MESSAGE_TAMPERED",
    );
    expect(codeOf(() => open({ ...m, tag: flipB64(m.tag) }, w.executor, w.opts()))).toBe(
      "ERR_MESSAGE_TAMPERED",
    );
    expect(codeOf(() => open({ ...m, iv: flipB64(m.iv) }, w.executor, w.opts()))).toBe(
      "ERR_MESSAGE_TAMPERED",
    );
  });

  it("an attacker who rewrites the header (the AAD) is refused: primitive, depth, expiry", () => {
    const w = world();
    const m = w.send();
    const edits: Partial<SealedMessage["header"]>[] = [
      { primitive: "send" },
      { depth: 3 },
      { expires_at: "2026-01-01T10:05:00.000Z" },
      { payload_type: "return_result" },
    ];
    for (const e of edits) {
      const forged = { ...m, header: { ...m.header, ...e } };
      expect(codeOf(() => open(forged, w.executor, w.opts()))).toBe("ERR_MESSAGE_TAMPERED");
    }
  });

  it("an attacker who replays a delivered message is refused (ERR_MESSAGE_REPLAYED)", () => {
    const w = world();
    const m = w.send();
    open(m, w.executor, w.opts());
    expect(codeOf(() => open(m, w.executor, w.opts(NOW + 1000)))).toBe("ERR_MESSAGE_REPLAYED");
  });

  it("a replay after a restart is still refused (the nonce store persists)", () => {
    const w = world();
    const path = join(mkdtempSync(join(tmpdir(), "warden-nonce-")), "messages.db");
    const m = w.send();
    const first = SqliteNonceStore.open(path);
    open(m, w.executor, { directory: w.directory, nonces: first, now: NOW });
    first.close();
    const again = SqliteNonceStore.open(path);
    try {
      expect(codeOf(() => open(m, w.executor, { directory: w.directory, nonces: again, now: NOW + 5 }))).toBe(
        "ERR_MESSAGE_REPLAYED",
      );
    } finally {
      again.close();
    }
  });

  it("a nonce store full of unexpired nonces refuses rather than forgets (fail closed)", () => {
    const w = world();
    const tiny = { directory: w.directory, nonces: new MemoryNonceStore(1), now: NOW };
    open(w.send(), w.executor, tiny);
    expect(codeOf(() => open(w.send(), w.executor, tiny))).toBe("ERR_MESSAGE_INBOX_FULL");
    // Once the first nonce has expired it is pruned and the store accepts again.
    const later = { ...tiny, now: NOW + 60_000 + 30_001 };
    const fresh = seal(
      { recipient: "executor", primitive: "send", payloadType: "status_update", payload: 1 },
      w.planner,
      w.executor,
      later.now,
    );
    expect(open(fresh, w.executor, later).payload).toBe(1);
  });

  it("a nonce store that cannot be opened stops the start (ERR_RUNTIME_STATE_OPEN)", () => {
    let code = "";
    try {
      SqliteNonceStore.open("/nonexistent-dir/for/sure/messages.db");
    } catch (err) {
      code = (err as { code: string }).code;
    }
    expect(code).toBe("ERR_RUNTIME_STATE_OPEN");
  });

  it("an attacker who delivers an expired message is refused (ERR_MESSAGE_EXPIRED)", () => {
    const w = world();
    const m = w.send();
    expect(codeOf(() => open(m, w.executor, w.opts(NOW + 60_000 + 30_001)))).toBe("ERR_MESSAGE_EXPIRED");
    // Within the skew it still opens.
    expect(open(w.send(), w.executor, w.opts(NOW + 60_000 + 29_000)).payload).toBeDefined();
  });

  it("a message dated in the future is refused (ERR_MESSAGE_EXPIRED)", () => {
    const w = world();
    expect(codeOf(() => open(w.send(), w.executor, w.opts(NOW - 60_000)))).toBe("ERR_MESSAGE_EXPIRED");
  });

  it("a message opened by someone it was not sealed for is refused (ERR_MESSAGE_WRONG_RECIPIENT)", () => {
    const w = world();
    expect(codeOf(() => open(w.send(), w.mallory, w.opts()))).toBe("ERR_MESSAGE_WRONG_RECIPIENT");
  });

  it("an attacker who retargets the header at itself cannot read it either", () => {
    const w = world();
    const m = w.send();
    const retargeted = { ...m, header: { ...m.header, recipient: "mallory" } };
    expect(codeOf(() => open(retargeted, w.mallory, w.opts()))).toBe("ERR_MESSAGE_TAMPERED");
  });

  it("a downgrade to an unsigned or unencrypted message is refused (ERR_MESSAGE_UNSIGNED)", () => {
    const w = world();
    const m = w.send();
    const { signature: _s, ...unsigned } = m;
    const plain = { v: m.v, alg: m.alg, header: m.header, payload: { task: "x" }, signature: m.signature };
    for (const bad of [
      unsigned,
      { ...m, signature: "" },
      { ...m, alg: "none" },
      { ...m, alg: "EdDSA" },
      plain,
      { ...m, v: "warden.msg.v0" },
    ]) {
      expect(codeOf(() => open(bad, w.executor, w.opts()))).toBe("ERR_MESSAGE_UNSIGNED");
    }
  });

  it("an agent that impersonates another sender is refused", () => {
    const w = world();
    // Mallory seals with her own keys but claims to be the planner.
    const forged = seal(
      { recipient: "executor", primitive: "delegate", payloadType: "delegate_task", payload: { rm: "-rf" } },
      { ...w.mallory, id: "planner" },
      w.executor,
      NOW,
    );
    expect(codeOf(() => open(forged, w.executor, w.opts()))).toBe("ERR_MESSAGE_SENDER_UNKNOWN");
    // Naming the planner's key id does not help: the signature is not the planner's.
    const withPlannerKid = seal(
      { recipient: "executor", primitive: "delegate", payloadType: "delegate_task", payload: { rm: "-rf" } },
      { ...w.mallory, id: "planner", keyId: w.planner.keyId },
      w.executor,
      NOW,
    );
    expect(codeOf(() => open(withPlannerKid, w.executor, w.opts()))).toBe("ERR_MESSAGE_TAMPERED");
  });

  it("a sender that is not registered is refused (ERR_MESSAGE_SENDER_UNKNOWN)", () => {
    const w = world();
    const stranger = generateMessagingKeys("stranger");
    expect(codeOf(() => open(w.send({ a: 1 }, stranger), w.executor, w.opts()))).toBe(
      "ERR_MESSAGE_SENDER_UNKNOWN",
    );
  });

  it("a malformed message is refused (ERR_MESSAGE_MALFORMED)", () => {
    const w = world();
    const m = w.send();
    expect(codeOf(() => open({ ...m, extra: 1 }, w.executor, w.opts()))).toBe("ERR_MESSAGE_MALFORMED");
    expect(codeOf(() => open([m], w.executor, w.opts()))).toBe("ERR_MESSAGE_MALFORMED");
    expect(codeOf(() => openText("{", w.executor, w.opts()))).toBe("ERR_MESSAGE_MALFORMED");
  });
});

describe("sealed messages (property)", () => {
  const payloads = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.parse(canonicalJson(v)) as JsonValue);

  it("open(seal(m)) = m, and what seal refuses it refuses with a code (never a message nobody can open)", () => {
    const w = world();
    fc.assert(
      fc.property(payloads, (p) => {
        let sealed: SealedMessage;
        try {
          sealed = w.send(p);
        } catch (err) {
          // Only the strict parser's refusals (a "__proto__" key); found by this property.
          expect((err as MessagingError).code).toBe("ERR_MESSAGE_MALFORMED");
          expect(canonicalJson(p)).toContain('"__proto__"');
          return;
        }
        const got = open(sealed, w.executor, {
          directory: w.directory,
          nonces: new MemoryNonceStore(),
          now: NOW,
        });
        expect(canonicalJson(got.payload)).toBe(canonicalJson(p));
      }),
      { numRuns: 200 },
    );
  });

  it("a payload the recipient's strict parser refuses (a __proto__ key) is refused at seal, not sealed", () => {
    const w = world();
    const payload = JSON.parse('{"__proto__": {"admin": true}}') as JsonValue;
    expect(codeOf(() => w.send(payload))).toBe("ERR_MESSAGE_MALFORMED");
  });

  it("any single-bit flip of the wire text is refused", () => {
    const w = world();
    const m = w.send({ task: "flip me", n: 7 });
    const text = Buffer.from(JSON.stringify(m), "utf8");
    fc.assert(
      fc.property(fc.integer({ min: 0, max: text.length * 8 - 1 }), (bit) => {
        const flipped = Buffer.from(text);
        flipped[bit >> 3] = flipped[bit >> 3]! ^ (1 << (bit & 7));
        const code = codeOf(() =>
          openText(flipped.toString("utf8"), w.executor, {
            directory: w.directory,
            nonces: new MemoryNonceStore(),
            now: NOW,
          }),
        );
        expect(code).not.toBe("opened");
        expect(code).toMatch(/^ERR_MESSAGE_/);
      }),
      { numRuns: 400 },
    );
  });
});
