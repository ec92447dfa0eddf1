import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { redactCredentials, redactString } from "../../src/journal/index.js";

// Realistic shapes; none of these is a live credential (AWS's documented example
// key, random characters elsewhere, a key pair generated for this test).
const pem = generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }) as string;
const rsaPem = generateKeyPairSync("rsa", { modulusLength: 1024 })
  .privateKey.export({ format: "pem", type: "pkcs1" })
  .toString();
const jwt =
  "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";

const SAMPLES: [string, string, string][] = [
  ["aws_access_key_id", "export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"],
  [
    "aws_secret_access_key",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "wJalrXUtnFEMI",
  ],
  [
    "github_token",
    "git clone https://x:ghp_16C7e42F292c6912E7710c838347Ae178B4a@github.com/o/r",
    "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
  ],
  [
    "github_token",
    "token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF",
    "github_pat_11ABCDEFG",
  ],
  [
    "openai_key",
    "OPENAI_API_KEY is sk-proj-T3BlbkFJq8x2Vb7aR9mZ1cD4eF5gH6iJ7kL8mN9oP0qR",
    "sk-proj-T3BlbkFJ",
  ],
  [
    "anthropic_key",
    "use sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0EdCbA-xyz for claude",
    "sk-ant-api03-Zx9Yw8",
  ],
  [
    "slack_token",
    "SLACK_BOT_TOKEN=xoxb-2417063587-4829103345123-q8XbT2kLmN9vZrA4sPdE1wYc",
    "xoxb-2417063587",
  ],
  ["stripe_key", "stripe key sk_live_51HqLyjWDarjtT1zdp7dcXyz4A", "sk_live_51HqLyjWDarjtT1zdp7dcXyz4A"],
  [
    "google_api_key",
    "?key=AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY&q=x",
    "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
  ],
  ["jwt", `session=${jwt}`, "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"],
  ["bearer_token", `Authorization: Bearer ${jwt}`, "eyJzdWIiOiIxMjM0NTY3ODkw"],
  ["bearer_token", "Authorization: Bearer 2YotnFZFEjr1zCsicMWpAA", "2YotnFZFEjr1zCsicMWpAA"],
  ["basic_auth", "Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l", "YWxhZGRpbjpvcGVuc2VzYW1l"],
  ["url_password", "DATABASE_URL=postgres://app:s3cr3t-P4ss@db.internal:5432/prod", "s3cr3t-P4ss"],
  ["url_password", "fetch https://deploy:hunter2@registry.example.com/v2/", "hunter2"],
  ["secret_assignment", 'config: {"password": "correct horse battery"}', "correct"],
  ["secret_assignment", "login failed for user=bob password=Tr0ub4dor&3", "Tr0ub4dor"],
  ["private_key", `key file:\n${pem}\nend`, pem.split("\n")[1]!],
  ["private_key", rsaPem, rsaPem.split("\n")[2]!],
  ["private_key", `truncated ${pem.slice(0, 60)}`, pem.slice(40, 60)],
];

describe("credential masking", () => {
  it.each(SAMPLES)("masks %s: %s", (kind, text, secret) => {
    const r = redactString(text);
    expect(r.kinds).toContain(kind);
    expect(r.value).not.toContain(secret);
    expect(r.value).toContain(`[REDACTED:${kind}]`);
  });

  it("a key id or signature that happens to start with sk- survives; a real key in those members does not", () => {
    const keyId = `sk-${"PYyGQrYYrnZsl_JKwYVyCgvDiHkIzzkfb35T5dpk"}`; // 43 base64url chars, like keyIdOf
    const signature = `sk-${"A".repeat(83)}`; // 86 base64url chars, like an Ed25519 signature
    const realKey = `sk-${"Z9".repeat(24)}`; // an OpenAI-shaped key: 51 chars
    const body = { evidence: { signing_key_id: keyId, signature }, kid: keyId, note: keyId };
    const r = redactCredentials(body);
    expect(r.value.evidence).toEqual({ signing_key_id: keyId, signature });
    expect(r.value.kid).toBe(keyId);
    expect(r.value.note).toBe("[REDACTED:openai_key]");
    const smuggled = redactCredentials({ signing_key_id: realKey, signature: realKey });
    expect(smuggled.value).toEqual({
      signing_key_id: "[REDACTED:openai_key]",
      signature: "[REDACTED:openai_key]",
    });
  });

  it("keeps the context an auditor needs", () => {
    expect(redactString("Authorization: Bearer 2YotnFZFEjr1zCsicMWpAA").value).toBe(
      "Authorization: Bearer [REDACTED:bearer_token]",
    );
    expect(redactString("postgres://app:s3cr3t@db.internal:5432/prod").value).toBe(
      "postgres://app:[REDACTED:url_password]@db.internal:5432/prod",
    );
  });

  it.each([
    "The password policy requires 12 characters and a symbol.",
    "Reset your password at https://example.com/account?tab=security",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed task-ask-1234567890abcdefghijkl",
    "run 0192f3a4-5b6c-7d8e-9f01-23456789abcd trace 4bf92f3577b34da6a3ce929d0e0e4736",
    "Bearer of bad news; Basic understanding of the API",
    "ssh://git@github.com/org/repo.git and https://user@example.com/",
    "AKIA is the prefix of AWS access key ids",
    "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----",
    "a risk-score of 0.42 for skeleton-key-holder",
  ])("leaves ordinary text alone: %s", (text) => {
    expect(redactString(text)).toEqual({ value: text, kinds: [] });
  });

  it("masks secret-named fields whatever they hold, and reports JSON Pointer paths", () => {
    const { value, redactions } = redactCredentials({
      user: "bob",
      password: "hunter2",
      headers: { Authorization: "token abc", "x-api-key": "k-123", accept: "json" },
      "a/b": ["ok", "AKIAIOSFODNN7EXAMPLE"],
    });
    expect(value).toEqual({
      user: "bob",
      password: "[REDACTED:secret_field]",
      headers: {
        Authorization: "[REDACTED:secret_field]",
        "x-api-key": "[REDACTED:secret_field]",
        accept: "json",
      },
      "a/b": ["ok", "[REDACTED:aws_access_key_id]"],
    });
    expect(redactions).toEqual([
      { path: "/password", kind: "secret_field" },
      { path: "/headers/Authorization", kind: "secret_field" },
      { path: "/headers/x-api-key", kind: "secret_field" },
      { path: "/a~1b/1", kind: "aws_access_key_id" },
    ]);
  });

  it("never turns a __proto__ member into a prototype", () => {
    const input = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    const { value } = redactCredentials(input);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.hasOwn(value, "__proto__")).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("is linear on adversarial input", () => {
    const many = "-----BEGIN PRIVATE KEY-----".repeat(20_000);
    expect(redactString(many).value).toBe("[REDACTED:private_key]");
    const spaces = `Bearer${" ".repeat(100_000)}x`;
    expect(redactString(spaces).kinds).toEqual([]);
  });
});
