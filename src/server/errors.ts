// The one table from error codes to HTTP statuses. Every error the sidecar sends is
// `{ "error": { "code", "message" } }` with the status below; fastify's own errors
// (body too large, unsupported media type, bad content length) are translated into
// these codes too, so a client never has to parse a framework's error text.
import { type ERROR_CODES, WardenError } from "../contracts/index.js";

type ServerCode = (typeof ERROR_CODES.server)[number];

/** Codes the HTTP API can return, with their statuses. Stable API: documented in docs/http-api.md. */
export const ERROR_STATUS = {
  ERR_AUTH_MISSING: 401,
  ERR_AUTH_INVALID: 401,
  ERR_AUTH_FORBIDDEN: 403,
  ERR_AUTH_PRINCIPAL_MISMATCH: 403,
  ERR_SERVER_BODY_TOO_LARGE: 413,
  ERR_SERVER_BODY_MALFORMED: 400,
  ERR_SERVER_MEDIA_TYPE: 415,
  ERR_SERVER_REQUEST_INVALID: 400,
  ERR_SERVER_NOT_FOUND: 404,
  ERR_SERVER_RUN_NOT_FOUND: 404,
  ERR_SERVER_RUN_FORBIDDEN: 403,
  ERR_SERVER_RATE_LIMITED: 429,
  // A principal's share of the fair decision queue is full (limits.maxInFlightPerPrincipal), or the queue shed it.
  ERR_SERVER_BUSY: 429,
  ERR_SERVER_NO_EXECUTOR: 422,
  ERR_SERVER_JOURNAL_UNAVAILABLE: 503,
  // Idempotency-Key: the first attempt is in flight or its replica stopped mid-call (it may have executed).
  ERR_SERVER_IDEMPOTENCY_PENDING: 409,
  ERR_SERVER_IDEMPOTENCY_MISMATCH: 422,
  ERR_SERVER_POLICY_ERROR: 503,
  ERR_SERVER_SHUTTING_DOWN: 503,
  ERR_SERVER_INTERNAL: 500,
  ERR_SERVER_CONFIG_INVALID: 500,
  // Startup only (the sidecar does not start without its key); never sent to a client.
  ERR_SERVER_JOURNAL_KEY_MISSING: 500,
  // Strict JSON parsing of request bodies.
  ERR_JSON_SYNTAX: 400,
  ERR_JSON_DUPLICATE_KEY: 400,
  ERR_JSON_FORBIDDEN_KEY: 400,
  ERR_JSON_TOO_LARGE: 413,
  ERR_CANON_TOO_DEEP: 400,
  ERR_CANON_LONE_SURROGATE: 400,
  // 1e400 parses to Infinity, which no JSON can carry back: refused at the parser.
  ERR_CANON_NON_FINITE_NUMBER: 400,
  // Runs (src/context SessionStore): runs are created by the runtime (POST /v1/runs) and
  // bound to their principal; an invented, foreign, ended or evicted run id is not found.
  ERR_RUN_UNKNOWN: 404,
  // Run capacity and pacing: retry later (or start a new run, for ERR_RUN_FULL).
  ERR_RUN_LIMIT: 429,
  ERR_RUN_FULL: 429,
  ERR_RUN_RATE_LIMITED: 429,
  ERR_RUN_BUDGET_EXHAUSTED: 429,
  // Principal state (quarantine) could not be read or written: fail closed.
  ERR_RUNTIME_STATE_OPEN: 503,
  ERR_RUNTIME_STATE_CORRUPT: 503,
  // The shared PostgreSQL store is unreachable or at the wrong schema version: fail closed.
  ERR_RUNTIME_STORE_SCHEMA: 503,
  ERR_RUNTIME_STORE_UNAVAILABLE: 503,
  // The approval queue's refusals (src/gate InProcessApprovals.decide).
  ERR_APPROVAL_NOT_FOUND: 404,
  ERR_APPROVAL_FORBIDDEN: 403,
  ERR_APPROVAL_INVALID: 400,
  // POST /v1/runs/:id/capabilities: terms that cannot be issued (bad constraints, ttl, uses).
  ERR_CAPABILITY_GRANT_INVALID: 400,
  // A token issued before its principal's grants were revoked (APAE trust revocation).
  ERR_CAPABILITY_REVOKED: 403,

  // Approvals signed by the approver (docs/identity.md#signed-approvals).
  ERR_APPROVAL_UNSIGNED: 400,
  ERR_APPROVAL_SIGNATURE_INVALID: 403,
  ERR_APPROVAL_WRONG_DECISION: 409,
  ERR_APPROVAL_REPLAYED: 409,
  ERR_APPROVAL_ALREADY_DECIDED: 409,
  // The communication gate and sealed messages (src/messaging, docs/identity.md#inter-agent-messages).
  ERR_MESSAGE_TAMPERED: 400,
  ERR_MESSAGE_EXPIRED: 400,
  ERR_MESSAGE_REPLAYED: 409,
  ERR_MESSAGE_WRONG_RECIPIENT: 400,
  ERR_MESSAGE_UNSIGNED: 400,
  ERR_MESSAGE_SENDER_UNKNOWN: 403,
  ERR_MESSAGE_MALFORMED: 400,
  ERR_MESSAGE_DENIED: 403,
  ERR_MESSAGE_INBOX_FULL: 429,
  ERR_MESSAGE_FORBIDDEN: 403,
  // AgentPin credentials (Authorization: AgentPin <jwt>, docs/identity.md): a credential
  // that does not verify is 401; a verified agent that may not act (unbound, inactive,
  // claiming more than declared) is 403.
  ERR_IDENTITY_ALGORITHM_REJECTED: 401,
  ERR_IDENTITY_SIGNATURE_INVALID: 401,
  ERR_IDENTITY_KEY_NOT_FOUND: 401,
  ERR_IDENTITY_KEY_EXPIRED: 401,
  ERR_IDENTITY_KEY_REVOKED: 401,
  ERR_IDENTITY_CREDENTIAL_EXPIRED: 401,
  ERR_IDENTITY_CREDENTIAL_REVOKED: 401,
  ERR_IDENTITY_DELEGATION_INVALID: 401,
  ERR_IDENTITY_DELEGATION_DEPTH_EXCEEDED: 401,
  ERR_IDENTITY_DISCOVERY_FETCH_FAILED: 401,
  ERR_IDENTITY_DISCOVERY_INVALID: 401,
  ERR_IDENTITY_DOMAIN_MISMATCH: 401,
  ERR_IDENTITY_AUDIENCE_MISMATCH: 401,
  ERR_IDENTITY_KEY_PIN_MISMATCH: 401,
  ERR_IDENTITY_AGENT_NOT_FOUND: 403,
  ERR_IDENTITY_AGENT_INACTIVE: 403,
  ERR_IDENTITY_CAPABILITY_EXCEEDED: 403,
  ERR_IDENTITY_CONSTRAINT_VIOLATION: 403,
  ERR_IDENTITY_CONFIG_INVALID: 500,
  // APAE (docs/trust.md): below a policy's trust threshold; in trust quarantine (with
  // Retry-After); a peer's trust notification that does not verify.
  ERR_TRUST_BELOW_THRESHOLD: 403,
  ERR_TRUST_QUARANTINED: 503,
  ERR_TRUST_ECT_MALFORMED: 400,
  ERR_TRUST_ECT_UNSIGNED: 401,
  ERR_TRUST_ECT_KEY_UNKNOWN: 401,
  ERR_TRUST_ECT_SIGNATURE_INVALID: 401,
  ERR_TRUST_ECT_EXPIRED: 401,
  ERR_TRUST_ASSERTION_INVALID: 400,
  ERR_TRUST_ASSERTION_HOPS: 400,
  ERR_TRUST_ECT_DUPLICATE: 409,
  ERR_TRUST_DOMAIN_NO_AGREEMENT: 403,
  ERR_TRUST_DOMAIN_ASSURANCE: 403,
  ERR_TRUST_DOMAIN_ANCHOR_UNAVAILABLE: 502,
  // AARTS hooks over HTTP (routes/hooks.ts): no compatible handshake yet; a malformed event.
  ERR_HOOK_HANDSHAKE_REQUIRED: 409,
  ERR_HOOK_EVENT_INVALID: 400,
  ERR_HOOK_POINT_UNKNOWN: 400,
  // The per-host engine map is full (hooks.maxEngines): refused, never evicted.
  ERR_HOOK_ENGINE_LIMIT: 503,
  // The memory firewall (routes/memory.ts, docs/memory.md).
  ERR_MEMORY_DENIED: 403,
  ERR_MEMORY_NOT_FOUND: 404,
  ERR_MEMORY_CLASSIFIED: 403,
  ERR_MEMORY_INSTRUCTION: 422,
  ERR_MEMORY_QUARANTINED: 409,
  ERR_MEMORY_LIMIT: 422,
  ERR_MEMORY_STORE: 503,
  ERR_MEMORY_CONFIG_INVALID: 500,
  // Distributed mode: another live replica serves the run (Misdirected Request; details: node).
  ERR_RUN_ELSEWHERE: 421,
  // The run was closed on this replica while the call was in flight (adopted by another
  // replica, ended, evicted): refused before anything executed; retry (a 421 names the owner).
  ERR_CONTEXT_SESSION_CLOSED: 409,
  // The approval console (src/console, docs/console.md): the console answers with this table too.
  ERR_CONSOLE_SESSION: 401,
  ERR_CONSOLE_CSRF: 403,
  ERR_CONSOLE_FORBIDDEN: 403,
  ERR_CONSOLE_NOT_FRESH: 401,
  ERR_CONSOLE_SIGN_IN_LIMITED: 429,
  ERR_CONSOLE_SIGN_IN_INVALID: 401,
  ERR_CONSOLE_KEY_INVALID: 400,
  ERR_CONSOLE_FORM_INVALID: 400,
  ERR_CONSOLE_CONFIG_INVALID: 500,
  ERR_CONSOLE_BUSY: 503,
  ERR_CONSOLE_LINK_INVALID: 404,
  // The signed early quarantine lift (POST /v1/apae/lift, the console's /console/quarantine/lift; docs/trust.md).
  ERR_TRUST_LIFT_INVALID: 400,
  ERR_TRUST_LIFT_SCOPE: 400,
  ERR_TRUST_LIFT_APPROVER_UNKNOWN: 403,
  ERR_TRUST_LIFT_SIGNATURE_INVALID: 401,
  ERR_TRUST_LIFT_UNSIGNED: 401,
  ERR_TRUST_LIFT_STALE: 409,
  ERR_TRUST_NOT_QUARANTINED: 409,
} as const;

// Every server-family code has a status (a missing one fails to compile).
const _everyServerCode: Record<ServerCode, number> = ERROR_STATUS;
void _everyServerCode;
// And every identity code (an AgentPin failure reaches HTTP with its own code).
const _everyIdentityCode: Record<(typeof ERROR_CODES.identity)[number], number> = ERROR_STATUS;
void _everyIdentityCode;
// And every memory code (the memory routes answer the firewall's codes as they are).
const _everyMemoryCode: Record<(typeof ERROR_CODES.memory)[number], number> = ERROR_STATUS;
void _everyMemoryCode;

export type ApiErrorCode = keyof typeof ERROR_STATUS;

export interface ApiErrorBody {
  error: { code: ApiErrorCode; message: string; details?: Record<string, unknown> };
}

/** An error the API answers with; its status always comes from ERROR_STATUS. */
export class ApiError extends Error {
  readonly code: ApiErrorCode;
  readonly details: Record<string, unknown> | undefined;
  /** Extra response headers (Retry-After, WWW-Authenticate). */
  readonly headers: Record<string, string>;

  constructor(
    code: ApiErrorCode,
    message: string,
    options: { details?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }

  body(): ApiErrorBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.details !== undefined ? { details: this.details } : {}),
      },
    };
  }
}

const FASTIFY_CODES: Readonly<Record<string, ApiErrorCode>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: "ERR_SERVER_BODY_TOO_LARGE",
  FST_ERR_CTP_INVALID_MEDIA_TYPE: "ERR_SERVER_MEDIA_TYPE",
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: "ERR_SERVER_BODY_MALFORMED",
  FST_ERR_CTP_EMPTY_JSON_BODY: "ERR_SERVER_BODY_MALFORMED",
  FST_ERR_CTP_INVALID_JSON_BODY: "ERR_SERVER_BODY_MALFORMED",
  FST_ERR_BAD_URL: "ERR_SERVER_REQUEST_INVALID",
  FST_ERR_ASYNC_CONSTRAINT: "ERR_SERVER_REQUEST_INVALID",
};

const hasCode = (code: string): code is ApiErrorCode => Object.hasOwn(ERROR_STATUS, code);

/** Translates anything thrown while handling a request into an ApiError (never leaking internals). */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof WardenError && err.code === "ERR_RUN_ELSEWHERE" && err.details !== undefined)
    return new ApiError(err.code, err.message, { details: err.details });
  // The run closed under a call in flight: the executor had not run (the result path catches its own).
  if (err instanceof WardenError && err.code === "ERR_CONTEXT_SESSION_CLOSED")
    return new ApiError(err.code, err.message, { details: { mayHaveExecuted: false } });
  if (err instanceof WardenError && hasCode(err.code)) return new ApiError(err.code, err.message);
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string" && Object.hasOwn(FASTIFY_CODES, code)) {
    const mapped = FASTIFY_CODES[code] as ApiErrorCode;
    return new ApiError(mapped, (err as Error).message);
  }
  const status = (err as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === "number" && status >= 400 && status < 500) {
    return new ApiError("ERR_SERVER_REQUEST_INVALID", "the request could not be processed");
  }
  return new ApiError("ERR_SERVER_INTERNAL", "internal error");
}
