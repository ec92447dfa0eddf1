// Signing and verifying whole tool contracts. What is signed is the canonical form of
// the parsed contract (contractToCanonical: metadata, every argument rule, templates,
// backends, output schema, custom types, scope, with defaults applied), never the
// manifest text, so reformatting a manifest keeps its signature while any change in
// meaning breaks it. The contract registry calls verifyContractIntegrity when
// signatures are required.
import { contractToCanonical } from "../canonical.js";
import type { ToolContract } from "../contract-schema.js";
import type { IntegrityResult } from "./result.js";
import {
  type ContractSignatureFile,
  type ContractVerifyOptions,
  readSignatureFile,
  type SignContractOptions,
  signCanonicalContract,
  verifyCanonicalContract,
  writeSignatureFile,
} from "./signature-file.js";
import type { Verified } from "./verify.js";

export type ContractIntegrityOptions = ContractVerifyOptions;

/** Signs a parsed contract; returns the signature file content (write it with writeSignatureFile). */
export function signContract(
  contract: ToolContract,
  options: Omit<SignContractOptions, "toolName">,
): ContractSignatureFile {
  return signCanonicalContract(contractToCanonical(contract), { ...options, toolName: contract.tool.name });
}

/** Signs a parsed contract and writes `<manifestPath>.sig` beside the manifest. */
export function signContractFile(
  contract: ToolContract,
  manifestPath: string,
  options: Omit<SignContractOptions, "toolName">,
): { path: string; file: ContractSignatureFile } {
  const file = signContract(contract, options);
  return { path: writeSignatureFile(manifestPath, file), file };
}

/**
 * Verifies the signature file beside `manifestPath` against the parsed `contract`:
 * unsigned, tampered, swapped-in, wrong-domain, revoked-key, changed-key and (under
 * pinPolicy "require") unpinned-key contracts all fail with their own code.
 */
export function verifyContractIntegrity(
  contract: ToolContract,
  manifestPath: string,
  options: ContractIntegrityOptions,
): IntegrityResult<Verified & { contractHash: string }> {
  const sig = readSignatureFile(manifestPath);
  if (!sig.ok) return sig;
  return verifyCanonicalContract(contractToCanonical(contract), contract.tool.name, sig.file, options);
}

/**
 * The contract as a SchemaPin signed-schema document `{schema, signature}`, which any
 * SchemaPin verifier (double-hash mode) checks against the domain's discovery document.
 */
export function contractAsSignedSchema(
  contract: ToolContract,
  file: ContractSignatureFile,
): { schema: Record<string, unknown>; signature: string } {
  return { schema: contractToCanonical(contract), signature: file.signature };
}
