// Credential masking. A journal is evidence that many people read and that is kept
// for years, so a token that slipped into a tool parameter or an error message must
// not be preserved in it. Every string in a body is scanned before the entry is
// sealed; matches are replaced by `[REDACTED:<kind>]`, keeping enough context
// (the header name, the URL's user and host) to stay useful to an auditor.
// Patterns are linear-time: no nested quantifiers, and the PEM block ends at the
// first END line or, if there is none, at the end of the string.

export type CredentialKind =
  | "private_key"
  | "jwt"
  | "aws_access_key_id"
  | "aws_secret_access_key"
  | "github_token"
  | "openai_key"
  | "anthropic_key"
  | "slack_token"
  | "stripe_key"
  | "google_api_key"
  | "bearer_token"
  | "basic_auth"
  | "url_password"
  | "secret_assignment"
  | "secret_field";

export interface Redaction {
  /** JSON Pointer (RFC 6901) of the string that held the credential. */
  path: string;
  kind: CredentialKind;
}

interface Rule {
  kind: CredentialKind;
  re: RegExp;
  /** Replacement; the default replaces the whole match. */
  replace?: (match: string, ...groups: string[]) => string;
}

const mask = (kind: CredentialKind) => `[REDACTED:${kind}]`;

// Order matters: specific token shapes first, so that a JWT after "Bearer " is
// reported as a bearer token with the scheme kept, and a PEM block is removed whole.
const RULES: Rule[] = [
  {
    kind: "private_key",
    re: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----|[\s\S]*$)/g,
  },
  {
    kind: "bearer_token",
    re: /\b(Bearer)(\s+)([A-Za-z0-9._~+/=-]{8,})/gi,
    // "Bearer responsibilities" is prose; a token has digits or symbols, or is long.
    replace: (m, scheme, sp, token) =>
      /[\d._~+/=-]/.test(token) || token.length >= 32 ? `${scheme}${sp}${mask("bearer_token")}` : m,
  },
  {
    kind: "basic_auth",
    re: /\b(Basic)(\s+)([A-Za-z0-9+/]{6,}={0,2})/g,
    // Only what decodes to user:password, so "Basic understanding" stays.
    replace: (m, scheme, sp, token) =>
      Buffer.from(token, "base64").toString("latin1").includes(":")
        ? `${scheme}${sp}${mask("basic_auth")}`
        : m,
  },
  { kind: "jwt", re: /\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{8,}/g },
  { kind: "aws_access_key_id", re: /\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b/g },
  {
    kind: "aws_secret_access_key",
    re: /\b(aws_secret_access_key|aws_secret_key|secretaccesskey)(["']?\s*[=:]\s*["']?)[A-Za-z0-9/+=]{40}\b/gi,
    replace: (_m, name, sep) => `${name}${sep}${mask("aws_secret_access_key")}`,
  },
  { kind: "github_token", re: /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b/g },
  { kind: "anthropic_key", re: /\bsk-ant-[A-Za-z0-9_-]{20,}/g },
  { kind: "openai_key", re: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g },
  { kind: "slack_token", re: /\bxox[abposre]-[A-Za-z0-9-]{10,}/g },
  { kind: "stripe_key", re: /\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}\b/g },
  { kind: "google_api_key", re: /\bAIza[0-9A-Za-z_-]{35}\b/g },
  {
    kind: "url_password",
    re: /\b([a-z][a-z0-9+.-]{1,30}:\/\/)([^\s:@/?#]{1,256}):([^\s@/?#]{1,256})@/gi,
    replace: (_m, scheme, user, pass) =>
      pass.startsWith("[REDACTED:") ? _m : `${scheme}${user}:${mask("url_password")}@`,
  },
  {
    kind: "secret_assignment",
    re: /\b(password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)(["']?\s*[=:]\s*["']?)([^\s"'&,;}]{4,})/gi,
    replace: (m, name, sep, value) =>
      value.startsWith("[REDACTED:") ? m : `${name}${sep}${mask("secret_assignment")}`,
  },
];

/** Object members whose string value is a secret whatever it looks like. */
const SECRET_FIELD =
  /^(?:password|passwd|passphrase|secret|client_secret|api_key|apikey|access_token|refresh_token|id_token|auth_token|private_key|authorization|proxy_authorization|cookie|set_cookie|x_api_key)$/;

function isSecretField(name: string): boolean {
  return SECRET_FIELD.test(name.toLowerCase().replace(/-/g, "_"));
}

/**
 * Members that hold a key id or an Ed25519 signature, which verifiers need intact: a
 * random base64url value of that exact length is kept, even when it happens to read like a
 * token (one key id in 262,144 starts with "sk-"). Any other shape in these members —
 * a real credential is longer or shorter — is scanned like every string.
 */
const KEY_ID_FIELD = /^(?:signing_key_id|key_id|keyid|kid)$/i;
const KEY_ID_VALUE = /^[A-Za-z0-9_-]{43}$/;
const SIGNATURE_FIELD = /^signature$/i;
const SIGNATURE_VALUE = /^[A-Za-z0-9_-]{86}$/;

function isVerifierData(field: string, v: string): boolean {
  return (
    (KEY_ID_FIELD.test(field) && KEY_ID_VALUE.test(v)) ||
    (SIGNATURE_FIELD.test(field) && SIGNATURE_VALUE.test(v))
  );
}

/** Masks credentials inside one string; returns the kinds found (empty when untouched). */
export function redactString(s: string): { value: string; kinds: CredentialKind[] } {
  const kinds: CredentialKind[] = [];
  let out = s;
  for (const rule of RULES) {
    rule.re.lastIndex = 0;
    if (!rule.re.test(out)) continue;
    rule.re.lastIndex = 0;
    const before = out;
    out = rule.replace
      ? out.replace(rule.re, rule.replace as (m: string, ...g: string[]) => string)
      : out.replace(rule.re, mask(rule.kind));
    if (out !== before) kinds.push(rule.kind);
  }
  return { value: out, kinds };
}

const escapePointer = (k: string) =>
  k.includes("~") || k.includes("/") ? k.replace(/~/g, "~0").replace(/\//g, "~1") : k;

/**
 * Returns a JSON value with credentials masked, and where they were. Copy on write:
 * containers holding nothing to mask are returned as they are (most bodies hold
 * no credential, and the journal scans every one); changed ones are fresh copies,
 * the input is never modified. Object keys are left as they are (they are schema
 * field names), values are scanned.
 */
export function redactCredentials<T>(value: T): { value: T; redactions: Redaction[] } {
  const redactions: Redaction[] = [];
  // The path to the current value as a stack, turned into a pointer only for a
  // redaction: building it for every member cost more than the scan of most strings.
  const at: string[] = [];
  const pointer = () => at.map((k) => `/${k}`).join("");
  const walk = (v: unknown, field: string | undefined): unknown => {
    if (typeof v === "string") {
      if (field !== undefined && isSecretField(field) && v.length > 0 && !v.startsWith("[REDACTED:")) {
        redactions.push({ path: pointer(), kind: "secret_field" });
        return mask("secret_field");
      }
      if (field !== undefined && isVerifierData(field, v)) return v;
      const r = redactString(v);
      if (r.kinds.length > 0) {
        const path = pointer();
        for (const kind of r.kinds) redactions.push({ path, kind });
      }
      return r.value;
    }
    if (Array.isArray(v)) {
      let out: unknown[] | null = null;
      for (let i = 0; i < v.length; i++) {
        at.push(String(i));
        const x = walk(v[i], undefined);
        at.pop();
        if (out === null && x !== v[i]) out = v.slice(0, i);
        out?.push(x);
      }
      return out ?? v;
    }
    if (v !== null && typeof v === "object") {
      const entries = Object.entries(v);
      let out: Record<string, unknown> | null = null;
      for (let i = 0; i < entries.length; i++) {
        const [k, x] = entries[i]!;
        at.push(escapePointer(k));
        const y = walk(x, k);
        at.pop();
        if (out === null && y !== x) {
          out = {};
          for (let j = 0; j < i; j++) define(out, entries[j]![0], entries[j]![1]);
        }
        if (out !== null) define(out, k, y);
      }
      return out ?? v;
    }
    return v;
  };
  return { value: walk(value, undefined) as T, redactions };
}

// defineProperty: a "__proto__" member stays data and never becomes a prototype.
function define(o: Record<string, unknown>, k: string, value: unknown): void {
  Object.defineProperty(o, k, { value, enumerable: true, writable: true, configurable: true });
}
