// Configuration of the memory firewall. Operators write it; it is parsed once by a strict
// zod schema into plain data with every bound filled in. Clearances are per principal;
// a principal not named gets `defaultClearance`, which defaults to the lowest level:
// deny by default, never "everything".
import { z } from "zod";
import { MemoryError } from "../contracts/index.js";

const Level = z.string().min(1).max(64);

export const MemoryConfigSchema = z.strictObject({
  /** SQLite file beside the journal (`<journal>.memory.db`, created 0600), or ":memory:". */
  path: z.string().min(1).max(4096),
  /** Ordered least to most sensitive; the same list as the context's classificationLevels. */
  classificationLevels: z.array(Level).min(1).default(["public", "internal", "confidential", "secret"]),
  /** Highest level each principal may read or write. */
  clearance: z.record(z.string().min(1).max(256), Level).default({}),
  /** Clearance of a principal not in `clearance` (default: the lowest level). */
  defaultClearance: Level.optional(),
  /**
   * `principal`: a run sees its principal's memories and shared ones. `lineage`: its own
   * principal's memories only when written in the same run lineage (a run and the runs
   * started from it), plus shared ones.
   */
  readScope: z.enum(["principal", "lineage"]).default("principal"),
  /** Memories kept in all (ERR_MEMORY_LIMIT beyond it). */
  maxRecords: z.number().int().min(1).max(10_000_000).default(100_000),
  maxRecordsPerPrincipal: z.number().int().min(1).default(10_000),
  /** Characters of one memory (ERR_MEMORY_LIMIT beyond it). */
  maxContentChars: z.number().int().min(1).max(1_000_000).default(16_384),
  /** Memories a search scores at most (the newest visible ones): bounds its cost. */
  maxSearchScan: z.number().int().min(1).max(1_000_000).default(5_000),
  /** Results one search returns at most. */
  maxResults: z.number().int().min(1).max(1000).default(20),
  /** Readers remembered per memory (for "who read the poisoned one"); oldest dropped beyond it. */
  maxReadsPerMemory: z.number().int().min(1).default(10_000),
});

export type MemoryConfig = z.infer<typeof MemoryConfigSchema>;
export type MemoryConfigInput = z.input<typeof MemoryConfigSchema>;

/** Parses operator configuration; throws ERR_MEMORY_CONFIG_INVALID naming the path. */
export function parseMemoryConfig(input: unknown): MemoryConfig {
  const parsed = MemoryConfigSchema.safeParse(input ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.join(".") ?? "";
    throw new MemoryError(
      "ERR_MEMORY_CONFIG_INVALID",
      `invalid memory configuration at ${path || "(root)"}: ${issue?.message ?? "invalid"}`,
      { details: { path } },
    );
  }
  const c = parsed.data;
  const levels = new Set(c.classificationLevels);
  if (levels.size !== c.classificationLevels.length) {
    throw new MemoryError("ERR_MEMORY_CONFIG_INVALID", "classificationLevels must be distinct");
  }
  for (const [who, level] of Object.entries(c.clearance)) {
    if (!levels.has(level))
      throw new MemoryError("ERR_MEMORY_CONFIG_INVALID", `clearance of ${who} is not a configured level`);
  }
  if (c.defaultClearance !== undefined && !levels.has(c.defaultClearance)) {
    throw new MemoryError("ERR_MEMORY_CONFIG_INVALID", "defaultClearance is not a configured level");
  }
  return c;
}

/** Rank of a level; an unknown level counts as the highest (unlabelled data is the most sensitive). */
export function levelRank(config: MemoryConfig, level: string): number {
  const i = config.classificationLevels.indexOf(level);
  return i < 0 ? config.classificationLevels.length - 1 : i;
}

/** The rank of the highest level a principal may see. */
export function clearanceRank(config: MemoryConfig, principalId: string): number {
  const level = config.clearance[principalId] ?? config.defaultClearance;
  return level === undefined ? 0 : levelRank(config, level);
}
