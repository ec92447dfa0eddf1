// The memory firewall's journal events. The Gate already journals each operation's
// decision and result; these record what only the firewall knows: which memory a write
// created (with its taint), which memories a read returned, refusals after or before the
// Gate (instruction-like content, classification, quarantine), and quarantines with the
// runs that had read the memory. Contents are never journaled, only their hash.
import { z } from "zod";
import { TaintLabel } from "../contracts/index.js";

const Id = z.string().min(1).max(64);
const Hash = z.string().regex(/^sha256:[0-9a-f]{64}$/);

export const MEMORY_WRITTEN = "warden.memory.written";
export const MEMORY_READ = "warden.memory.read";
export const MEMORY_REFUSED = "warden.memory.refused";
export const MEMORY_DELETED = "warden.memory.deleted";
export const MEMORY_QUARANTINED = "warden.memory.quarantined";

export const MEMORY_EVENT_TYPES: Readonly<Record<string, z.ZodType>> = {
  [MEMORY_WRITTEN]: z.strictObject({
    memory_id: Id,
    principal_id: z.string(),
    decision_id: z.string(),
    content_hash: Hash,
    classification: z.string(),
    scope: z.enum(["private", "shared"]),
    lineage: z.string(),
    taint: z.array(TaintLabel),
  }),
  [MEMORY_READ]: z.strictObject({
    principal_id: z.string(),
    decision_id: z.string(),
    op: z.enum(["read", "search"]),
    memory_ids: z.array(Id).max(1000),
    taint: z.array(TaintLabel),
  }),
  [MEMORY_REFUSED]: z.strictObject({
    principal_id: z.string(),
    op: z.enum(["write", "read", "search", "delete"]),
    code: z.string(),
    memory_id: Id.optional(),
    decision_id: z.string().optional(),
    findings: z.array(z.string()).max(64).optional(),
  }),
  [MEMORY_DELETED]: z.strictObject({ memory_id: Id, principal_id: z.string(), decision_id: z.string() }),
  [MEMORY_QUARANTINED]: z.strictObject({
    memory_id: Id,
    reason: z.string().max(1024),
    by: z.string().max(256),
    readers: z.array(z.strictObject({ run_id: z.string(), principal_id: z.string(), at: z.string() })),
  }),
};

/** Registers the memory event types (idempotent). */
export function registerMemoryEventTypes(registry: {
  has(type: string): boolean;
  register(type: string, schema: z.ZodType): void;
}): void {
  for (const [type, schema] of Object.entries(MEMORY_EVENT_TYPES)) {
    if (!registry.has(type)) registry.register(type, schema);
  }
}
