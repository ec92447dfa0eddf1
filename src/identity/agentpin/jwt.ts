// AgentPin credentials as compact JWTs (§5). Every SDK signs ES256 with an ASN.1 DER
// signature (not JOSE's 64-byte r||s), so signing and verifying are done here with
// node:crypto; the DER is parsed strictly (src/crypto ecdsaDerToRaw) and verified as r||s,
// so a re-encoded or padded signature never passes. Parsing checks the header before any
// key work (§5.2): the algorithm comes from the discovery key, never from `alg`.
import type { KeyObject } from "node:crypto";
import { parseStrictJson } from "../../contracts/index.js";
import { ecdsaDerToRaw, sign, verify } from "../../crypto/index.js";
import { done, fail, type Step } from "./codes.js";
import { decodeBase64Url, encodeBase64Url } from "./encoding.js";
import { ClaimsSchema, type CredentialClaims, type CredentialHeader, HeaderSchema } from "./schemas.js";

export const CREDENTIAL_TYP = "agentpin-credential+jwt";
/** Larger than any honest credential (a 3-link chain is ~2 KB); bounds parsing work. */
export const MAX_CREDENTIAL_LENGTH = 16 * 1024;

export interface ParsedCredential {
  header: CredentialHeader;
  claims: CredentialClaims;
  signingInput: string;
  /** null when the third part is not canonical base64url: step 5 then fails (SIGNATURE_INVALID, as in every SDK). */
  signature: Buffer | null;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function jsonPart(part: string): unknown {
  const bytes = decodeBase64Url(part);
  if (bytes === null) throw new Error("not canonical base64url");
  return parseStrictJson(utf8.decode(bytes), { maxLength: MAX_CREDENTIAL_LENGTH, maxDepth: 16 });
}

/** Step 1 (§6.1): structure, header (alg ES256, typ), claims. Every failure is ALGORITHM_REJECTED. */
export function parseCredential(token: string): Step<ParsedCredential> {
  const reject = (why: string) => fail("ALGORITHM_REJECTED", `credential rejected: ${why}`);
  if (token.length > MAX_CREDENTIAL_LENGTH) return reject("longer than 16 KiB");
  const parts = token.split(".");
  if (parts.length !== 3) return reject("a JWT has 3 parts");
  const [h, p, s] = parts as [string, string, string];
  let header: unknown;
  let claims: unknown;
  try {
    header = jsonPart(h);
    claims = jsonPart(p);
  } catch {
    return reject("header or payload is not base64url JSON");
  }
  const hd = HeaderSchema.safeParse(header);
  if (!hd.success) return reject("header needs alg, typ and kid");
  if (hd.data.alg !== "ES256") return reject("alg must be ES256");
  if (hd.data.typ !== CREDENTIAL_TYP) return reject(`typ must be ${CREDENTIAL_TYP}`);
  const cl = ClaimsSchema.safeParse(claims);
  if (!cl.success) return reject("payload claims are missing or mistyped");
  // The signature is only decoded here; a bad encoding is the signature's failure (step 5).
  const signature = decodeBase64Url(s);
  return done({ header: hd.data, claims: cl.data, signingInput: `${h}.${p}`, signature });
}

/** ES256 over the signing input with a DER signature; false for any malformed signature. */
export function verifyDerSignature(key: KeyObject, signingInput: string, der: Uint8Array | null): boolean {
  if (der === null) return false;
  let raw: Buffer;
  try {
    raw = ecdsaDerToRaw(der);
  } catch {
    return false;
  }
  return verify(key, Buffer.from(signingInput, "utf8"), raw, { ecdsaEncoding: "raw" });
}

/** Claims in the SDKs' member order; absent optional claims are left out, never null. */
function orderedClaims(c: CredentialClaims): Record<string, unknown> {
  const out: Record<string, unknown> = { iss: c.iss, sub: c.sub };
  if (c.aud !== undefined) out.aud = c.aud;
  out.iat = c.iat;
  out.exp = c.exp;
  if (c.nbf !== undefined) out.nbf = c.nbf;
  out.jti = c.jti;
  out.agentpin_version = c.agentpin_version;
  out.capabilities = c.capabilities;
  if (c.constraints !== undefined) out.constraints = c.constraints;
  if (c.delegation_chain !== undefined) out.delegation_chain = c.delegation_chain;
  if (c.nonce !== undefined) out.nonce = c.nonce;
  return out;
}

/** Signs a credential as every AgentPin SDK does: compact JSON, base64url, DER ES256. */
export function signCredential(privateKey: KeyObject, kid: string, claims: CredentialClaims): string {
  const header = encodeBase64Url(JSON.stringify({ alg: "ES256", typ: CREDENTIAL_TYP, kid }));
  const payload = encodeBase64Url(JSON.stringify(orderedClaims(claims)));
  const input = `${header}.${payload}`;
  const der = sign(privateKey, Buffer.from(input, "utf8"), { ecdsaEncoding: "der" });
  return `${input}.${encodeBase64Url(der)}`;
}
