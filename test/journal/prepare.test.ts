// The append path's body preparation: one copy walk plus native serialization must
// equal canonicalJson exactly and refuse what it refuses; the credential hint must
// match wherever the full masking scan would mask something.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/contracts/index.js";
import { redactCredentials } from "../../src/journal/index.js";
import { CREDENTIAL_HINT, prepareBody } from "../../src/journal/prepare.js";

const codeOf = (f: () => unknown): { code?: string | undefined; cause?: string | undefined } => {
  try {
    f();
  } catch (err) {
    const e = err as { code?: string; cause?: { code?: string } };
    return { code: e.code, cause: e.cause?.code };
  }
  return {};
};

describe("prepareBody", () => {
  it("writes exactly canonicalJson's text and returns an unshared copy (property)", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (v) => {
        // A __proto__ member anywhere is refused (its own test below).
        fc.pre(!JSON.stringify(v).includes('"__proto__":'));
        const { body, json } = prepareBody(v);
        expect(json).toBe(canonicalJson(v));
        expect(body).toEqual(JSON.parse(json));
        expect(body).not.toBe(v);
        for (const k of Object.keys(v)) {
          const x = v[k];
          if (typeof x === "object" && x !== null) expect(body[k]).not.toBe(x);
        }
      }),
      { numRuns: 500 },
    );
  });

  it("orders member names by UTF-16 code units, for few and for many members (property)", () => {
    // Objects of up to 24 members are sorted by prepare.ts's own sort, larger ones natively.
    const names = fc.string({ unit: "binary", maxLength: 6 }).filter((k) => k !== "__proto__");
    fc.assert(
      fc.property(fc.dictionary(names, fc.integer(), { minKeys: 0, maxKeys: 40 }), (v) => {
        fc.pre(!Object.keys(v).some((k) => /\p{Surrogate}/u.test(k)));
        expect(prepareBody({ v }).json).toBe(canonicalJson({ v }));
      }),
      { numRuns: 300 },
    );
  });

  it("orders integer-like and other member names as RFC 8785 does", () => {
    const v = { b: 1, "10": 2, "9": 3, a: { "2": [], "1x": null, "": true }, "\u00e9": "x", Z: -0 };
    const { body, json } = prepareBody(v);
    expect(json).toBe(canonicalJson(v));
    expect(Object.is(body.Z, 0)).toBe(true);
  });

  it("stays canonical with a toJSON planted on Object.prototype", () => {
    const proto = Object.prototype as { toJSON?: () => unknown };
    proto.toJSON = () => "planted";
    try {
      expect(prepareBody({ a: { b: 1 } }).json).toBe('{"a":{"b":1}}');
    } finally {
      delete proto.toJSON;
    }
  });

  it.each([
    ["a __proto__ member", () => JSON.parse('{"a":[{"__proto__":{"x":1}}]}'), undefined],
    ["undefined", () => ({ a: undefined }), "ERR_CANON_UNSUPPORTED_TYPE"],
    ["NaN", () => ({ a: [1, Number.NaN] }), "ERR_CANON_NON_FINITE_NUMBER"],
    ["Infinity", () => ({ a: Number.POSITIVE_INFINITY }), "ERR_CANON_NON_FINITE_NUMBER"],
    ["a Date", () => ({ a: new Date() }), "ERR_CANON_UNSUPPORTED_TYPE"],
    ["a Map", () => ({ a: new Map() }), "ERR_CANON_UNSUPPORTED_TYPE"],
    ["a class instance", () => ({ a: new (class K {})() }), "ERR_CANON_UNSUPPORTED_TYPE"],
    ["a function", () => ({ a: () => 1 }), "ERR_CANON_UNSUPPORTED_TYPE"],
    ["a symbol", () => ({ a: Symbol("s") }), "ERR_CANON_UNSUPPORTED_TYPE"],
    ["a bigint", () => ({ a: 1n }), "ERR_CANON_UNSUPPORTED_TYPE"],
    ["a lone surrogate in a string", () => ({ a: "x\ud800" }), "ERR_CANON_LONE_SURROGATE"],
    ["a lone surrogate in a key", () => ({ "\udc00": 1 }), "ERR_CANON_LONE_SURROGATE"],
    [
      "nesting deeper than 128",
      () => {
        let v: unknown = 1;
        for (let i = 0; i < 130; i++) v = [v];
        return { a: v };
      },
      "ERR_CANON_TOO_DEEP",
    ],
    [
      "a cycle",
      () => {
        const a: Record<string, unknown> = {};
        a.self = a;
        return a;
      },
      "ERR_CANON_CYCLE",
    ],
  ])("refuses %s (ERR_JOURNAL_BODY_INVALID)", (_name, make, cause) => {
    expect(codeOf(() => prepareBody(make() as Record<string, unknown>))).toEqual({
      code: "ERR_JOURNAL_BODY_INVALID",
      cause,
    });
  });
});

describe("CREDENTIAL_HINT", () => {
  const samples = [
    "export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "SECRETACCESSKEY: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "git clone https://x:ghp_16C7e42F292c6912E7710c838347Ae178B4a@github.com/o/r",
    "token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF",
    "ghs_16C7e42F292c6912E7710c838347Ae178B4a",
    "OPENAI_API_KEY is sk-proj-T3BlbkFJq8x2Vb7aR9mZ1cD4eF5gH6iJ7kL8mN9oP0qR",
    "use sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0EdCbA-xyz for claude",
    "xoxb-2417063587-4829103345123-q8XbT2kLmN9vZrA4sPdE1wYc",
    "stripe key rk_test_51HqLyjWDarjtT1zdp7dcXyz4A",
    "?key=AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY&q=x",
    "session=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV",
    "Authorization: BEARER 2YotnFZFEjr1zCsicMWpAA",
    "Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l",
    "DATABASE_URL=postgres://app:s3cr3t-P4ss@db.internal:5432/prod",
    'redis://us"er:p\\ss@cache',
    "login failed for user=bob PWD=Tr0ub4dor&3",
    "client-secret: abcd1234",
    "-----BEGIN OPENSSH PRIVATE KEY-----\nabc",
  ];

  it("matches every credential sample the full scan masks", () => {
    for (const s of samples) {
      expect(redactCredentials({ s }).redactions.length, s).toBeGreaterThan(0);
      expect(CREDENTIAL_HINT.test(canonicalJson({ note: s })), s).toBe(true);
    }
  });

  it("matches every member name masked as a secret field, in any case and with dashes", () => {
    const names = [
      "password",
      "passwd",
      "passphrase",
      "secret",
      "client_secret",
      "api_key",
      "apikey",
      "access_token",
      "refresh_token",
      "id_token",
      "auth_token",
      "private_key",
      "authorization",
      "proxy_authorization",
      "cookie",
      "set_cookie",
      "x_api_key",
    ];
    for (const n of names) {
      for (const name of [n, n.toUpperCase(), n.replace(/_/g, "-")]) {
        expect(redactCredentials({ [name]: "v" }).redactions.length, name).toBe(1);
        expect(CREDENTIAL_HINT.test(canonicalJson({ [name]: "v" })), name).toBe(true);
      }
    }
  });

  it("never misses what the full scan masks (property)", () => {
    const fragments = fc.constantFrom(
      ...samples.flatMap((s) => [s, s.slice(0, 12), s.slice(12)]),
      "Bearer ",
      "Basic ",
      "://",
      ":",
      "@",
      "password=",
      "sk-",
      "AKIA",
      "eyJ",
      ".",
      "\n",
      '"',
      "\\",
    );
    const text = fc
      .array(fc.oneof(fragments, fc.string({ maxLength: 8 }), fc.stringMatching(/^[A-Za-z0-9_-]{1,40}$/)), {
        maxLength: 8,
      })
      .map((parts) => parts.join(""));
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 12 }), fragments), text, (field, value) => {
        const body = { [field]: value };
        if (redactCredentials(body).redactions.length > 0) {
          expect(CREDENTIAL_HINT.test(canonicalJson(body))).toBe(true);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it("an attacker's text the flat word list flags is flagged by the grouped hint too, and only that (property)", () => {
    // The hint as first written: one alternative per masking need. The grouped form
    // must accept exactly the same texts, so no credential skips the full scan.
    const flat =
      /-----BEGIN|bearer|basic|eyJ[A-Za-z0-9_-]{5}|(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}|secret|gh[pousr]_|github_pat_|sk-[A-Za-z0-9_-]{20}|[rs]k_(?:live|test)_|xox[abposre]-|AIza|:\/\/[^\s:@/?#]+:[^\s@/?#]+@|passw|passphrase|pwd|api[_-]?key|token|cookie|authorization|private[_-]?key/i;
    const words = fc.constantFrom(
      ...["-----BEGIN", "BEARER", "basic", "eyJ", "AKIA", "asia", "ABIA", "acca", "SECRET", "ghp_", "GHO_"],
      ...[
        "github_pat_",
        "sk-",
        "SK_",
        "rk_live_",
        "sk_test_",
        "xoxb-",
        "XOXP-",
        "AIza",
        "aiza",
        "://",
        ":",
        "@",
      ],
      ...["passw", "PASSPHRASE", "passp", "pwd", "api-key", "API_KEY", "apikey", "token", "Cookie"],
      ...[
        "authorization",
        "private-key",
        "PRIVATE_KEY",
        "privatekey",
        "a",
        "s",
        "p",
        "g",
        "b",
        "k",
        "_",
        "-",
      ],
    );
    const text = fc
      .array(fc.oneof(words, fc.string({ maxLength: 6 }), fc.stringMatching(/^[A-Za-z0-9_-]{1,24}$/)), {
        maxLength: 10,
      })
      .map((parts) => parts.join(""));
    fc.assert(
      fc.property(text, (t) => {
        expect(CREDENTIAL_HINT.test(t), t).toBe(flat.test(t));
      }),
      { numRuns: 5000 },
    );
  });

  it("stays quiet on an ordinary decision body (no full scan)", () => {
    const body = {
      decision: "allow",
      parameters: { url: "https://api.example.org/data?page=1" },
      subject: "spiffe://org/agent/planner#r1",
      request_hash: `sha256:${"ab".repeat(32)}`,
      reason_codes: ["ALLOWLIST_MATCH"],
      risk_tier: "low",
      task: "task-42",
    };
    expect(CREDENTIAL_HINT.test(canonicalJson(body))).toBe(false);
  });

  it("is linear on adversarial input (a quadratic scan would not finish)", () => {
    expect(CREDENTIAL_HINT.test("eyJ".repeat(200_000))).toBe(true);
    expect(CREDENTIAL_HINT.test("e".repeat(600_000))).toBe(false);
    expect(CREDENTIAL_HINT.test("://a:".repeat(200_000))).toBe(false);
    expect(CREDENTIAL_HINT.test(`${"://a:b".repeat(200_000)}`)).toBe(false);
    expect(CREDENTIAL_HINT.test("ASIA".repeat(200_000))).toBe(true);
  });
});
