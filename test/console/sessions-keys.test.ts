// Units of the console: the session table (idle timeout, lifetime, bound, random ids),
// the browser key store (0600 file, bounds, reload into the keyring, malformed file), the
// form parser (property-tested), the cookie flags under TLS and the sign-in limiter.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { BrowserKeyStore } from "../../src/console/keys.js";
import { parseForm, sessionCookie, sessionIdFrom } from "../../src/console/security.js";
import { ConsoleSessions } from "../../src/console/sessions.js";
import { generateKeyPair } from "../../src/crypto/index.js";
import { ApproverKeyring } from "../../src/journal/index.js";

const cfg = { idleTimeoutSeconds: 60, maxSessionSeconds: 600, maxSessions: 3 };

describe("console sessions", () => {
  it("a session unused past the idle timeout is ended, and a used one is kept", () => {
    let now = 0;
    const t = new ConsoleSessions(cfg, () => now);
    const a = t.create("alice", ["approver"]);
    now = 59_000;
    expect(t.touch(a.id).ok).toBe(true);
    now = 59_000 + 60_001;
    expect(t.touch(a.id)).toEqual({ ok: false, reason: "idle" });
    expect(t.touch(a.id)).toEqual({ ok: false, reason: "unknown" });
  });

  it("a session in steady use still ends at its lifetime", () => {
    let now = 0;
    const t = new ConsoleSessions(cfg, () => now);
    const a = t.create("alice", ["approver"]);
    for (now = 0; now <= 600_000; now += 30_000) expect(t.touch(a.id).ok).toBe(true);
    now += 1;
    expect(t.touch(a.id)).toEqual({ ok: false, reason: "expired" });
  });

  it("the table is bounded: a new sign-in past maxSessions ends the least recently used session", () => {
    let now = 0;
    const t = new ConsoleSessions(cfg, () => now);
    const [a, b, c] = [t.create("a", ["approver"]), t.create("b", ["approver"]), t.create("c", ["auditor"])];
    now = 1000;
    t.touch(a.id);
    const d = t.create("d", ["approver"]);
    expect(t.size).toBe(3);
    expect(t.touch(b.id).ok).toBe(false);
    for (const x of [a, c, d]) expect(t.touch(x.id).ok).toBe(true);
  });

  it("ids and CSRF tokens are random, 256-bit, distinct; roles come from the credential", () => {
    const t = new ConsoleSessions({ ...cfg, maxSessions: 100 });
    const seen = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const s = t.create("x", ["approver", "auditor", "finance"]);
      expect(s.id).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(s.csrfToken).not.toBe(s.id);
      seen.add(s.id).add(s.csrfToken);
      expect(s.roles).toEqual(["approver", "auditor"]);
      expect(s.credentialRoles).toEqual(["approver", "auditor", "finance"]);
    }
    expect(seen.size).toBe(100);
  });

  it("a missing, oversized or invented session id is not a session", () => {
    const t = new ConsoleSessions(cfg);
    t.create("alice", ["approver"]);
    expect(t.touch(undefined)).toEqual({ ok: false, reason: "missing" });
    expect(t.touch("x".repeat(200))).toEqual({ ok: false, reason: "unknown" });
    expect(t.touch("A".repeat(43))).toEqual({ ok: false, reason: "unknown" });
  });
});

describe("the session cookie", () => {
  it("is Secure when the sidecar serves TLS, and a cleared cookie has Max-Age=0", () => {
    expect(sessionCookie("v", { base: "/console", tls: true, maxAge: 10 })).toBe(
      "warden_console=v; Path=/console; HttpOnly; SameSite=Strict; Max-Age=10; Secure",
    );
    expect(sessionCookie("", { base: "/console", tls: false, maxAge: 0 })).toContain("Max-Age=0");
    expect(sessionIdFrom("a=1; warden_console=abc; warden_console=def")).toBe("abc");
    expect(sessionIdFrom("other=1")).toBeUndefined();
  });
});

describe("the form parser", () => {
  const name = fc
    .string({ minLength: 1, maxLength: 12 })
    .filter((k) => !["__proto__", "constructor", "prototype"].includes(k));
  it("returns exactly the fields of a form with distinct names", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(name, fc.string({ maxLength: 40 })), {
          selector: (t) => t[0],
          maxLength: 20,
        }),
        (pairs) => {
          const body = new URLSearchParams(pairs).toString();
          expect({ ...parseForm(body) }).toEqual(Object.fromEntries(pairs));
        },
      ),
    );
  });

  it("refuses any form that repeats a field name, whatever else it holds", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(name, fc.string())), name, fc.string(), (pairs, dup, v) => {
        const body = new URLSearchParams([...pairs, [dup, v], [dup, v]]).toString();
        expect(() => parseForm(body)).toThrow(/repeated|too many|forbidden/);
      }),
    );
  });

  it("refuses prototype keys and more than 64 fields", () => {
    expect(() => parseForm("__proto__=x")).toThrow(/forbidden/);
    expect(() => parseForm(Array.from({ length: 65 }, (_, i) => `f${i}=1`).join("&"))).toThrow(/too many/);
    expect(Object.getPrototypeOf(parseForm("a=1"))).toBeNull();
  });
});

describe("the browser key store", () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  const x = () => generateKeyPair("ed25519").publicKey.export({ format: "jwk" }).x as string;

  it("persists registered keys (0600) and loads them into the approval keyring after a restart", () => {
    dir = mkdtempSync(join(tmpdir(), "console-keys-"));
    const path = join(dir, "j.db.console-keys.json");
    const store = BrowserKeyStore.open(path, 2);
    const k = x();
    const added = store.add("alice", k, new Date());
    expect(added).toMatchObject({ ok: true, fresh: true });
    expect(store.add("alice", k, new Date())).toMatchObject({ ok: true, fresh: false });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const ring = new ApproverKeyring();
    BrowserKeyStore.open(path, 2).loadInto(ring);
    const keyId = added.ok ? added.key.keyId : "";
    expect(ring.key("alice", keyId)).toBeDefined();
    expect(ring.key("bob", keyId)).toBeUndefined();
    expect(readFileSync(path, "utf8")).not.toContain("PRIVATE");
  });

  it("an approver cannot register more keys than allowed", () => {
    const store = BrowserKeyStore.open(undefined, 2);
    expect(store.add("alice", x(), new Date()).ok).toBe(true);
    expect(store.add("alice", x(), new Date()).ok).toBe(true);
    expect(store.add("alice", x(), new Date())).toMatchObject({ ok: false, code: "ERR_CONSOLE_KEY_INVALID" });
    expect(store.add("bob", x(), new Date()).ok).toBe(true);
  });

  it("a tampered key file stops the start (ERR_CONSOLE_CONFIG_INVALID)", () => {
    dir = mkdtempSync(join(tmpdir(), "console-keys-"));
    const path = join(dir, "keys.json");
    const store = BrowserKeyStore.open(path, 2);
    store.add("alice", x(), new Date());
    const text = readFileSync(path, "utf8");
    writeFileSync(path, text.replace(/"x":"[^"]+"/, `"x":"${x()}"`));
    expect(() => BrowserKeyStore.open(path, 2)).toThrow(
      expect.objectContaining({ code: "ERR_CONSOLE_CONFIG_INVALID" }),
    );
    writeFileSync(path, "{not json");
    expect(() => BrowserKeyStore.open(path, 2)).toThrow(
      expect.objectContaining({ code: "ERR_CONSOLE_CONFIG_INVALID" }),
    );
  });
});
