// Contract load events: one plain record per manifest the runtime loaded or refused,
// shaped as the body of a journal entry. The tools layer cannot import the journal, so
// it only defines the types and zod schemas; the runtime registers them under
// CONTRACT_LOADED_EVENT / CONTRACT_REFUSED_EVENT and appends one entry per record
// (a refused load is journaled before the process exits).
import { z } from "zod";

export const CONTRACT_LOADED_EVENT = "warden.contract.loaded";
export const CONTRACT_REFUSED_EVENT = "warden.contract.refused";

const Fingerprint = z.string().regex(/^sha256:[0-9a-f]{64}$/);

/** A contract that was registered. `verified: false` only when trust mode is off. */
export const ContractLoadedBodySchema = z.strictObject({
  outcome: z.literal("loaded"),
  trust_mode: z.enum(["off", "enforce"]),
  /** The manifest's file name inside the contract directory (no directory part). */
  file: z.string().min(1).max(1024),
  tool: z.string().min(1).max(256),
  /** sha256 of the schemapin-v1 canonical contract (what a signature covers). */
  contract_hash: Fingerprint,
  verified: z.boolean(),
  /** Signer key (RFC 7638 thumbprint) and fingerprint; null when not verified. */
  key_id: z.string().max(128).nullable(),
  key_fingerprint: Fingerprint.nullable(),
  domain: z.string().max(253).nullable(),
  pin: z.enum(["first_use", "pinned", "repinned", "not_checked"]).nullable(),
});

/** A manifest that was not registered, with the stable code of the reason. */
export const ContractRefusedBodySchema = z.strictObject({
  outcome: z.literal("refused"),
  trust_mode: z.enum(["off", "enforce"]),
  file: z.string().min(1).max(1024),
  /** The tool name when the manifest parsed, else null. */
  tool: z.string().max(256).nullable(),
  code: z.string().regex(/^ERR_[A-Z0-9_]+$/),
  message: z.string().max(2048),
});

export type ContractLoadedBody = z.infer<typeof ContractLoadedBodySchema>;
export type ContractRefusedBody = z.infer<typeof ContractRefusedBodySchema>;
export type ContractLoadEvent = ContractLoadedBody | ContractRefusedBody;

/** The journal entry type for an event. */
export function contractEventType(event: ContractLoadEvent): string {
  return event.outcome === "loaded" ? CONTRACT_LOADED_EVENT : CONTRACT_REFUSED_EVENT;
}
