// The signature file Warden writes beside a tool contract manifest (`<manifest>.sig`).
// The signature itself is a plain SchemaPin signature (double-hash, schemapin-v1) over
// the canonical form of the whole parsed contract, so any SchemaPin verifier can check
// `{schema: <canonical contract>, signature}` with the domain's discovery document. The
// other fields are unsigned metadata: they say which tool, domain and key to look for,
// and the contract hash explains a failure, but none of them is trusted on its own.

import type { KeyObject } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { z } from "zod";
import { IntegrityError, isoTime, parseStrictJson, sha256Hex } from "../../contracts/index.js";
import { fingerprintOf, keyIdOf } from "../../crypto/index.js";
import { writeFileAtomic } from "./atomic-write.js";
import { SCHEMAPIN_CANONICALIZATION, schemapinCanonicalBytes } from "./canonical.js";
import { attempt, fail, type IntegrityResult } from "./result.js";
import { assertP256, signSchemaPin } from "./signature.js";
import { type TrustOptions, type Verified, verifyArtefact } from "./verify.js";

export const SIGNATURE_FILE_SUFFIX = ".sig";
const MAX_SIGNATURE_FILE = 16 * 1024;

const SignatureFileSchema = z.strictObject({
  warden_contract_signature: z.literal(1),
  schemapin_version: z.string().max(16),
  canonicalization: z.string().max(64),
  tool_name: z.string().min(1).max(256),
  domain: z.string().regex(/^[^\s@/]{1,253}$/),
  contract_hash: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  signature: z.string().max(256),
  signer_fingerprint: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  signer_kid: z.string().max(128),
  signed_at: z.string().max(64),
});

export type ContractSignatureFile = z.infer<typeof SignatureFileSchema>;

export const signatureFilePath = (manifestPath: string): string => `${manifestPath}${SIGNATURE_FILE_SUFFIX}`;

export interface SignContractOptions {
  privateKey: KeyObject;
  domain: string;
  toolName: string;
  now?: Date;
}

/** Signs the canonical form of a contract; returns the signature file's content. */
export function signCanonicalContract(
  canonical: object,
  options: SignContractOptions,
): ContractSignatureFile {
  assertP256(options.privateKey, "contract signing key");
  const file: ContractSignatureFile = {
    warden_contract_signature: 1,
    schemapin_version: "1.4",
    canonicalization: SCHEMAPIN_CANONICALIZATION,
    tool_name: options.toolName,
    domain: options.domain,
    contract_hash: sha256Hex(schemapinCanonicalBytes(canonical)),
    signature: signSchemaPin(options.privateKey, canonical, "double"),
    signer_fingerprint: fingerprintOf(options.privateKey),
    signer_kid: keyIdOf(options.privateKey),
    signed_at: isoTime(options.now ?? new Date()),
  };
  const ok = SignatureFileSchema.safeParse(file);
  if (!ok.success)
    fail("ERR_INTEGRITY_SIGNATURE_FILE_INVALID", `cannot sign: ${ok.error.issues[0]?.message}`);
  return file;
}

export function parseSignatureFile(value: unknown): IntegrityResult<{ file: ContractSignatureFile }> {
  return attempt(() => {
    const parsed = SignatureFileSchema.safeParse(value);
    if (!parsed.success) {
      const i = parsed.error.issues[0];
      fail(
        "ERR_INTEGRITY_SIGNATURE_FILE_INVALID",
        `signature file: ${i?.path.join(".") ?? ""}: ${i?.message ?? ""}`,
      );
    }
    return { file: parsed.data };
  });
}

/** Reads `<manifest>.sig`; a missing file is ERR_INTEGRITY_UNSIGNED. */
export function readSignatureFile(
  manifestPath: string,
): IntegrityResult<{ file: ContractSignatureFile; path: string }> {
  const path = signatureFilePath(manifestPath);
  return attempt(() => {
    let text: string;
    try {
      if (statSync(path).size > MAX_SIGNATURE_FILE)
        fail("ERR_INTEGRITY_SIGNATURE_FILE_INVALID", `${path} is too large`);
      text = readFileSync(path, "utf8");
    } catch (err) {
      if (err instanceof IntegrityError) throw err;
      if ((err as NodeJS.ErrnoException).code === "ENOENT")
        fail("ERR_INTEGRITY_UNSIGNED", `no signature file ${path}`);
      fail("ERR_INTEGRITY_SIGNATURE_FILE_INVALID", `cannot read ${path}`, err);
    }
    let value: unknown;
    try {
      value = parseStrictJson(text, { maxLength: MAX_SIGNATURE_FILE });
    } catch (err) {
      fail("ERR_INTEGRITY_SIGNATURE_FILE_INVALID", `${path} is not valid JSON`, err);
    }
    const parsed = parseSignatureFile(value);
    if (!parsed.ok) fail(parsed.code, parsed.message);
    return { file: parsed.file, path };
  });
}

/** Writes `<manifest>.sig` atomically (temp + rename, mode 0644); returns its path. */
export function writeSignatureFile(manifestPath: string, file: ContractSignatureFile): string {
  const path = signatureFilePath(manifestPath);
  writeFileAtomic(path, `${JSON.stringify(file, null, 2)}\n`, 0o644);
  return path;
}

export interface ContractVerifyOptions extends TrustOptions {
  /** When set, the signature file must name this domain. */
  domain?: string;
}

/**
 * Verifies a contract's signature file against its canonical form. The file must name
 * the same tool (a signature file swapped in from another contract is refused before
 * any cryptography) and, when `options.domain` is set, the same domain.
 */
export function verifyCanonicalContract(
  canonical: object,
  toolName: string,
  file: ContractSignatureFile,
  options: ContractVerifyOptions,
): IntegrityResult<Verified & { contractHash: string }> {
  if (file.tool_name !== toolName) {
    return {
      ok: false,
      code: "ERR_INTEGRITY_SIGNATURE_MISMATCH",
      message: `signature file is for tool ${JSON.stringify(file.tool_name)}, not ${JSON.stringify(toolName)}`,
    };
  }
  if (options.domain !== undefined && file.domain !== options.domain) {
    return {
      ok: false,
      code: "ERR_INTEGRITY_DOMAIN_MISMATCH",
      message: `signature file names domain ${file.domain}, expected ${options.domain}`,
    };
  }
  const contractHash = attempt(() => ({ hash: sha256Hex(schemapinCanonicalBytes(canonical)) }));
  if (!contractHash.ok) return contractHash;
  const result = verifyArtefact(
    {
      value: canonical,
      signature: file.signature,
      domain: file.domain,
      toolId: toolName,
      claimedFingerprint: file.signer_fingerprint,
      canonicalization: file.canonicalization,
    },
    options,
  );
  if (result.ok) return { ...result, contractHash: contractHash.hash };
  if (result.code === "ERR_INTEGRITY_SIGNATURE_INVALID" && contractHash.hash !== file.contract_hash) {
    return { ...result, message: `${result.message} (the contract changed since it was signed)` };
  }
  return result;
}
