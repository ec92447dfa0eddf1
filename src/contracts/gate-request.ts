// The Gate's input: a structured proposal (never natural language), with Ari Kernel's
// ToolCall field names so Ari-style policies and scenarios carry over. Also the
// structured facts the Gate hands to policy alongside the request: who the principal
// is (from configuration, never from the request) and what the session has seen.
import { z } from "zod";
import { fastGateRequest, UNSURE } from "./gate-request-fast.js";

export const TAINT_SOURCES = [
  "web",
  "rag",
  "email",
  "retrieved-doc",
  "model-generated",
  "user-provided",
  "tool-output",
  "mcp",
  // Set by the Gate's output screening on a result whose text carries instructions
  // addressed to the agent (docs/gate.md#output-screening); never by a caller's claim alone.
  "instructions",
] as const;
export const TaintSource = z.enum(TAINT_SOURCES);
export type TaintSource = z.infer<typeof TaintSource>;

export const BUILTIN_TOOL_CLASSES = [
  "http",
  "file",
  "shell",
  "database",
  "retrieval",
  "mcp",
  "memory",
  "message",
  "delegate",
] as const;

const Name = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_][A-Za-z0-9_.:/-]*$/, "letters, digits and _ . : / - only");

export const TaintLabel = z.strictObject({
  source: TaintSource,
  origin: z.string().max(512),
  confidence: z.number().min(0).max(1).optional(),
  addedAt: z.string().max(64).optional(),
  propagatedFrom: z.string().max(128).optional(),
});
export type TaintLabel = z.infer<typeof TaintLabel>;

/**
 * The caller's verified agent identity (an AgentPin credential, src/identity). Set only by
 * an entry point after it verified the credential (the sidecar refuses a body that states
 * one its credential does not carry); policy can match on it and every decision records it.
 */
export const AgentIdentityFacts = z.strictObject({
  agentId: z.string().min(1).max(512),
  domain: z.string().min(1).max(253),
  capabilities: z.array(z.string().max(512)).max(256),
});
export type AgentIdentityFacts = z.infer<typeof AgentIdentityFacts>;

/** A proposal to the Gate. Parameters are plain JSON data, size-limited by the edge that parsed them. */
export const GateRequest = z.strictObject({
  principalId: Name,
  runId: z.string().min(1).max(128),
  /** A built-in tool class or a contract's own. */
  toolClass: Name,
  action: Name,
  /** Contract name, when the call names a tool contract. */
  tool: Name.optional(),
  parameters: z.record(z.string().max(256), z.json()).default({}),
  taintLabels: z.array(TaintLabel).max(256).default([]),
  /** The user's original request (trusted input); used for value-level provenance. Never interpreted. */
  originalRequest: z.string().max(1_000_000).optional(),
  /** Free text from the model (reasoning, description). Hashed into the record at most, never interpreted. */
  rationale: z.string().max(1_000_000).optional(),
  traceId: z
    .string()
    .regex(/^[0-9a-f]{32}$/)
    .optional(),
  /** A capability token (compact JWS) granted for this run; checked before policy. Never journaled. */
  capability: z.string().min(1).max(16_384).optional(),
  identity: AgentIdentityFacts.optional(),
});
export type GateRequest = z.infer<typeof GateRequest>;
export type GateRequestInput = z.input<typeof GateRequest>;

const SOURCES: ReadonlySet<string> = new Set(TAINT_SOURCES);

/**
 * `GateRequest.safeParse(raw)`, the same result for every input: well-formed plain input
 * takes a pre-compiled check that builds the value zod would (gate-request-fast.ts), and
 * anything else, every refusal included, is zod's own parse.
 */
export function safeParseGateRequest(raw: unknown): z.ZodSafeParseResult<GateRequest> {
  const fast = fastGateRequest(raw, SOURCES);
  if (fast !== UNSURE) return { success: true, data: fast as GateRequest };
  return GateRequest.safeParse(raw);
}

// Requests parsed by parseGateRequest. Membership cannot be forged (the set is private,
// and a copy is a different object), and a member cannot change after its parse (it is
// deep-frozen), so the Gate can take one as parsed instead of parsing it a second time.
const parsedRequests = new WeakSet<object>();

function deepFreeze(v: unknown): void {
  if (typeof v !== "object" || v === null || Object.isFrozen(v)) return;
  Object.freeze(v);
  for (const x of Array.isArray(v) ? v : Object.values(v)) deepFreeze(x);
}

/**
 * Parses a GateRequest at an edge (the sidecar, a host adapter). On success the data is
 * the schema's own fresh copy, deep-frozen; handing it to the Gate skips the Gate's own
 * parse of the same request. Anything else given to the Gate is parsed there as before.
 */
export function parseGateRequest(raw: unknown): z.ZodSafeParseResult<GateRequest> {
  const r = safeParseGateRequest(raw);
  if (r.success) {
    deepFreeze(r.data);
    parsedRequests.add(r.data);
  }
  return r;
}

/** True only for the unchanged result of parseGateRequest (never for a copy or a look-alike). */
export function isParsedGateRequest(v: unknown): v is GateRequest {
  return typeof v === "object" && v !== null && parsedRequests.has(v);
}

/** The five decisions (OATS §7). */
export const DECISIONS = ["allow", "deny", "modify", "step_up", "defer"] as const;
export const Decision = z.enum(DECISIONS);
export type Decision = z.infer<typeof Decision>;
