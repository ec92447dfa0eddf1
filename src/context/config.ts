// Configuration of the session context: classification levels, budgets, rate limits,
// taint boundaries, provenance bounds, behavioural rules and quarantine. Operators write
// it (YAML/JSON), so it is parsed once by a strict zod schema into plain data with every
// default filled in; nothing here is ever read from a request. Patterns are plain
// case-insensitive substrings, never regexes, so configuration cannot introduce ReDoS.
import { z } from "zod";
import { ContextError, TaintSource } from "../contracts/index.js";
import { DEFAULT_MAX_OUTPUTS } from "./provenance-types.js";

/** The six Ari Kernel sequence rules, in evaluation order (first match wins). */
export const BEHAVIOURAL_RULE_IDS = [
  "web_taint_sensitive_probe",
  "denied_capability_then_escalation",
  "sensitive_read_then_egress",
  "tainted_database_write",
  "tainted_shell_with_data",
  "secret_access_then_any_egress",
] as const;
export type BehaviouralRuleId = (typeof BEHAVIOURAL_RULE_IDS)[number];

/** `toolClass:action`, either side may be `*`. */
const ActionPattern = z
  .string()
  .regex(/^(\*|[A-Za-z0-9_][A-Za-z0-9_.:/-]*):(\*|[A-Za-z0-9_][A-Za-z0-9_.-]*)$/, "toolClass:action");
const Substring = z.string().min(1).max(256);
const Limit = z.number().nonnegative().finite();

/** OATS §9.2 run budgets (src/context/budgets.ts); each absent one is unlimited. */
const Count = z.number().int().nonnegative().optional();
const Budgets = z.strictObject({
  toolCalls: Count,
  tokens: Count,
  wallTimeMs: Count,
  cost: Limit.optional(),
  /** ORGA loop iterations (counted by the loop through recordUsage). */
  iterations: Count,
  /** Outbound network requests and bytes (sent + received), reported by executors. */
  networkRequests: Count,
  networkBytes: Count,
  /** Bytes and files written to the filesystem, reported by executors. */
  fsBytesWritten: Count,
  fsFilesWritten: Count,
});

const Rules = z.strictObject({
  enabled: z.array(z.enum(BEHAVIOURAL_RULE_IDS)).default([...BEHAVIOURAL_RULE_IDS]),
  /** Events kept in the recent-event window (Ari: 20). */
  windowSize: z.number().int().min(1).max(1000).default(20),
  /** Sources that make data untrusted for the sequence rules. */
  untrustedSources: z.array(TaintSource).default(["web", "rag", "email"]),
  /**
   * `window`: an untrusted label anywhere in the window arms the taint rules (Ari).
   * `call`: only the proposed call's own effective taint does (relies on value provenance).
   */
  taintScope: z.enum(["window", "call"]).default("window"),
  sensitivePaths: z
    .array(Substring)
    .default([
      ".ssh",
      ".env",
      ".aws",
      ".gnupg",
      ".kube/config",
      ".docker/config",
      ".netrc",
      ".npmrc",
      ".pypirc",
      ".git-credentials",
      "credentials",
      "id_rsa",
      "id_ed25519",
      "/etc/shadow",
      "/etc/passwd",
      "secrets",
    ]),
  /** Actions that read files (for sensitive reads). */
  fileReads: z.array(ActionPattern).default(["file:read", "file:list", "file:stat"]),
  /** Outbound writes (Ari: HTTP POST/PUT/PATCH/DELETE). */
  egress: z
    .array(ActionPattern)
    .default(["http:post", "http:put", "http:patch", "http:delete", "message:send", "email:send"]),
  /** Any outbound traffic, reads included (a GET can carry data in its URL). */
  anyEgress: z.array(ActionPattern).default(["http:*", "message:*", "email:*", "delegate:*"]),
  shellExec: z.array(ActionPattern).default(["shell:exec", "shell:run"]),
  databaseWrites: z
    .array(ActionPattern)
    .default([
      "database:write",
      "database:exec",
      "database:execute",
      "database:mutate",
      "database:insert",
      "database:update",
      "database:delete",
    ]),
  /** Commands longer than this (characters) count as "shell with data". Ari: 100. */
  shellCommandLength: z.number().int().min(1).default(100),
  /** Substrings of a database query/table naming secret storage. */
  secretTables: z
    .array(Substring)
    .default(["secret", "credential", "password", "passwd", "api_key", "apikey", "private_key", "token"]),
  /** Substrings of a URL naming a secret store. */
  secretEndpoints: z
    .array(Substring)
    .default(["vault", "/v1/secret", "secretsmanager", "keyvault", "secretmanager"]),
  /** Risk of each tool class for escalation (Ari: http=1 < database=2 < file=3 < shell=5). */
  classRisk: z.record(z.string(), z.number()).default({ http: 1, database: 2, file: 3, shell: 5 }),
});

const Provenance = z.strictObject({
  enabled: z.boolean().default(true),
  /** Shared runs of letters and digits shorter than this never count as copied (the k-gram size). */
  minSubstring: z.number().int().min(8).max(256).default(20),
  /** Winnowing window: runs of minSubstring + winnowWindow - 1 always count; 1 indexes every k-gram. */
  winnowWindow: z.number().int().min(1).max(64).default(4),
  /** Distinctive tokens (with a digit or `@ . / :`) at least this long are matched whole. */
  minToken: z.number().int().min(4).max(256).default(8),
  /** Characters indexed per output; text beyond it is summarized by an overflow entry. */
  maxCharsPerOutput: z
    .number()
    .int()
    .min(1)
    .default(1 << 20),
  /** Total k-gram fingerprints kept per run; beyond it outputs are not indexed but still count (fail closed). */
  maxFingerprints: z
    .number()
    .int()
    .min(1)
    .default(1 << 21),
  /** Characters of a request's parameters scanned; beyond it the request inherits all output taint. */
  maxScanChars: z
    .number()
    .int()
    .min(1)
    .default(1 << 20),
  /**
   * Tool outputs indexed one by one per run. Later outputs are folded into one merged record
   * that fails closed: any substantial argument value then counts as copied from it, with the
   * union of the folded outputs' taint (journaled once, `provenance_merged`).
   */
  maxOutputs: z.number().int().min(1).max(1_000_000).default(DEFAULT_MAX_OUTPUTS),
});

const Taint = z.strictObject({
  /** Label every output of a tool class with this boundary source (Ari rule 1: ATTACH). */
  boundaries: z
    .record(z.string(), TaintSource)
    .default({ http: "web", mcp: "mcp", retrieval: "rag", email: "email" }),
  /** Every label seen in the run joins every later call's effective taint (strict, Ari run-level). */
  sticky: z.boolean().default(false),
  /**
   * Where taint follows the agent (issue 37). `principal` (default): a new run starts with
   * the taint of every run of its principal active within `carryWindowMs`, named parent
   * or not. `explicit`: only a named `parentRun` carries taint in — for a host serving
   * unrelated end users under one principal; an agent then sheds taint by opening a run.
   */
  carry: z.enum(["principal", "explicit"]).default("principal"),
  /** How long a run's taint follows its principal after the run was last active. */
  carryWindowMs: z
    .number()
    .int()
    .min(1)
    .default(24 * 60 * 60_000),
});

const Quarantine = z.strictObject({
  /** Denials (counted over the run) that quarantine it. Ari: 5. */
  denialThreshold: z.number().int().min(1).default(5),
  /** Actions still permitted once quarantined (Ari: http.get/head/options, file.read, database.query). */
  readOnly: z
    .array(ActionPattern)
    .default([
      "http:get",
      "http:head",
      "http:options",
      "file:read",
      "file:list",
      "file:stat",
      "database:query",
      "retrieval:*",
      "memory:read",
    ]),
  /** Tool contract categories that are read-only (DARE `tool_category`). */
  readOnlyCategories: z.array(z.string()).default(["read_only"]),
});

/** Memory and run-count bounds (issue 17 finding 2). Exceeding one is a coded refusal. */
const Limits = z.strictObject({
  /** Runs a principal may hold open at once (ERR_RUN_LIMIT beyond it, after idle eviction). */
  maxOpenRunsPerPrincipal: z.number().int().min(1).default(64),
  /** Runs open in the store at once, all principals together (ERR_RUN_LIMIT). */
  maxOpenRuns: z.number().int().min(1).default(10_000),
  /** Calls a run may propose (ERR_RUN_FULL beyond it: start a new run). */
  maxCallsPerRun: z.number().int().min(1).default(100_000),
  /**
   * Distinct tools (`tool`, else `toolClass:action`) a run may call: a call naming one more is
   * refused ERR_RUN_FULL (`details.kind: "tools"`), so the per-tool counts policy sees stay
   * exact and bounded (a host naming a fresh tool per call cannot grow them).
   */
  maxToolsPerRun: z.number().int().min(1).default(1024),
  /**
   * Bytes of requests (canonical JSON, UTF-16 code units) a run may propose in all
   * (ERR_RUN_FULL beyond it: start a new run, carrying taint with parentRun).
   */
  maxBytesPerRun: z
    .number()
    .int()
    .min(1024)
    .default(128 * 1024 * 1024),
  /** Chain events kept in memory per run; older ones are rolled into the chain anchor. */
  eventsRetained: z.number().int().min(16).max(1_000_000).default(256),
  /** A run with no activity for this long is evicted (reported for the journal). */
  idleMs: z
    .number()
    .int()
    .min(1)
    .default(30 * 60_000),
  /** A reservation never committed or released is given back after this long. */
  reservationTtlMs: z
    .number()
    .int()
    .min(1)
    .default(15 * 60_000),
  /** Ended or evicted runs remembered (owner and taint, for parentRun and refusing reuse). */
  retiredRunsRemembered: z.number().int().min(0).default(10_000),
});

export const ContextConfigSchema = z.strictObject({
  /** Ordered from least to most sensitive. Unlabelled or unknown data counts as the last. */
  classificationLevels: z
    .array(z.string().min(1).max(64))
    .min(1)
    .default(["public", "internal", "confidential", "secret"]),
  budgets: Budgets.default({}),
  rateLimits: z
    .strictObject({
      maxCallsPerMinute: z.number().int().min(1).optional(),
      perPrincipal: z.record(z.string(), z.number().int().min(1)).default({}),
    })
    .default({ perPrincipal: {} }),
  taint: Taint.default(Taint.parse({})),
  provenance: Provenance.default(Provenance.parse({})),
  rules: Rules.default(Rules.parse({})),
  quarantine: Quarantine.default(Quarantine.parse({})),
  limits: Limits.default(Limits.parse({})),
  /** Decision events summarized in `SessionFacts.recentEvents`. */
  recentEventsInFacts: z.number().int().min(0).max(1000).default(20),
});

export type ContextConfig = z.infer<typeof ContextConfigSchema>;
export type ContextConfigInput = z.input<typeof ContextConfigSchema>;

/** Parses operator configuration; throws ERR_CONTEXT_CONFIG_INVALID with the offending path. */
export function parseContextConfig(input: unknown = {}): ContextConfig {
  const parsed = ContextConfigSchema.safeParse(input ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.join(".") ?? "";
    throw new ContextError(
      "ERR_CONTEXT_CONFIG_INVALID",
      `invalid context configuration at ${path || "(root)"}: ${issue?.message ?? "invalid"}`,
      { details: { path } },
    );
  }
  const levels = parsed.data.classificationLevels;
  if (new Set(levels).size !== levels.length) {
    throw new ContextError("ERR_CONTEXT_CONFIG_INVALID", "classificationLevels must be distinct", {
      details: { path: "classificationLevels" },
    });
  }
  return parsed.data;
}

/** Matches `toolClass:action` against patterns where either side may be `*`. */
export function matchesAction(patterns: readonly string[], toolClass: string, action: string): boolean {
  // Compared in place (no slices): this runs for several lists on every call.
  for (const p of patterns) {
    const i = p.lastIndexOf(":");
    if (i < 0) {
      // Not a pattern the schema admits; kept to the original slicing for exactness.
      if ((p.slice(0, -1) === "*" || p.slice(0, -1) === toolClass) && (p === "*" || p === action))
        return true;
      continue;
    }
    const n = p.length - i - 1;
    const classOk = (i === 1 && p[0] === "*") || (i === toolClass.length && p.startsWith(toolClass));
    const actionOk = (n === 1 && p[i + 1] === "*") || (n === action.length && p.endsWith(action));
    if (classOk && actionOk) return true;
  }
  return false;
}
