// Strict decoders for the two base64 flavours AgentPin uses: unpadded base64url for the
// JWT parts and standard padded base64 for delegation attestations (every SDK writes it;
// SPEC-NOTES §7). Node's Buffer.from(…, "base64") silently skips junk and mixes the
// alphabets; these accept exactly one canonical spelling per byte string, so two
// verifiers can never read different bytes from one token.

const B64URL = /^[A-Za-z0-9_-]*$/;
const B64STD = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Decodes unpadded base64url; null when the text is not its canonical spelling. */
export function decodeBase64Url(text: string): Buffer | null {
  if (!B64URL.test(text) || text.length % 4 === 1) return null;
  const bytes = Buffer.from(text, "base64url");
  return bytes.toString("base64url") === text ? bytes : null;
}

export function encodeBase64Url(bytes: Uint8Array | string): string {
  return Buffer.from(bytes).toString("base64url");
}

/** Decodes padded standard base64; null when the text is not its canonical spelling. */
export function decodeBase64Std(text: string): Buffer | null {
  if (!B64STD.test(text)) return null;
  const bytes = Buffer.from(text, "base64");
  return bytes.toString("base64") === text ? bytes : null;
}
