// Who may see which memory, as pure functions of the configuration: another principal's
// private memory is "not found" (its existence is not revealed), a run outside the
// lineage (readScope lineage) likewise; then quarantine, then clearance. Also the result
// helpers the firewall answers with.
import { createHash } from "node:crypto";
import { isoTime } from "../contracts/index.js";
import { clearanceRank, levelRank, type MemoryConfig } from "./config.js";
import type { MemoryRecord, Visibility } from "./store.js";
import type { MemoryCaller, MemoryErrorCode, MemoryItem, MemoryResult } from "./types.js";

export const fail = <T>(
  code: MemoryErrorCode,
  message: string,
  extra: { reasonCodes?: string[]; decisionId?: string } = {},
): MemoryResult<T> => ({ ok: false, code, message, ...extra });

export function sha256(text: string): string {
  return `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`;
}

export function itemOf(r: MemoryRecord, score?: number): MemoryItem {
  return {
    id: r.id,
    content: r.content,
    classification: r.classification,
    scope: r.scope,
    taint: r.taint,
    createdAt: isoTime(r.createdAt),
    ...(score !== undefined ? { score } : {}),
  };
}

/** Why `caller` may not have `r` (undefined: it may). `lineage` is computed only when needed. */
export function refusalOf(
  config: MemoryConfig,
  caller: MemoryCaller,
  r: MemoryRecord,
  lineage: () => string,
): MemoryErrorCode | undefined {
  const own = r.principalId === caller.principalId;
  if (!own && r.scope !== "shared") return "ERR_MEMORY_NOT_FOUND";
  if (own && config.readScope === "lineage" && r.scope !== "shared" && r.lineage !== lineage()) {
    return "ERR_MEMORY_NOT_FOUND";
  }
  if (r.quarantinedAt !== null) return "ERR_MEMORY_QUARANTINED";
  if (levelRank(config, r.classification) > clearanceRank(config, caller.principalId)) {
    return "ERR_MEMORY_CLASSIFIED";
  }
  return undefined;
}

/** What a search may consider: the caller's own (of its lineage) and shared ones, up to its clearance. */
export function visibilityOf(
  config: MemoryConfig,
  caller: MemoryCaller,
  lineage: string | undefined,
): Visibility {
  const levels = config.classificationLevels.slice(0, clearanceRank(config, caller.principalId) + 1);
  return { principalId: caller.principalId, levels, ...(lineage !== undefined ? { lineage } : {}) };
}

export const messages: Record<MemoryErrorCode, string> = {
  ERR_MEMORY_CONFIG_INVALID: "invalid memory configuration",
  ERR_MEMORY_DENIED: "the Gate did not allow the memory operation",
  ERR_MEMORY_NOT_FOUND: "no such memory",
  ERR_MEMORY_CLASSIFIED: "the memory is classified above the principal's clearance",
  ERR_MEMORY_INSTRUCTION: "the content reads as instructions to an agent",
  ERR_MEMORY_QUARANTINED: "the memory is quarantined",
  ERR_MEMORY_LIMIT: "a memory store bound would be exceeded",
  ERR_MEMORY_STORE: "the memory store failed",
};
