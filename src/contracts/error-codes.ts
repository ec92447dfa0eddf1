// The code table of Warden's error model (src/contracts/errors.ts): every code, grouped by
// family, with a one-line meaning. Codes are stable API; the sidecar maps them to HTTP in
// one table (src/server/errors.ts).

/** Every error code Warden can throw, grouped by family. Codes are stable API. */
export const ERROR_CODES = {
  canon: [
    "ERR_CANON_NON_FINITE_NUMBER",
    "ERR_CANON_LONE_SURROGATE",
    "ERR_CANON_UNSUPPORTED_TYPE",
    "ERR_CANON_CYCLE",
    "ERR_CANON_TOO_DEEP",
    "ERR_JSON_SYNTAX",
    "ERR_JSON_DUPLICATE_KEY",
    "ERR_JSON_FORBIDDEN_KEY",
    "ERR_JSON_TOO_LARGE",
  ],
  contract: [
    "ERR_CONTRACT_RECORD_INVALID",
    "ERR_CONTRACT_ID_INVALID",
    "ERR_CONTRACT_NAMESPACE",
    "ERR_CONTRACT_SCHEMA_VERSION",
    "ERR_CONTRACT_RECORD_TYPE",
    "ERR_CONTRACT_PAYLOAD_FORM",
    "ERR_CONTRACT_HASH_MISMATCH",
  ],
  crypto: [
    "ERR_CRYPTO_KEY_TYPE",
    "ERR_CRYPTO_KEY_INVALID",
    "ERR_CRYPTO_KEY_FILE_PERMISSIONS",
    "ERR_CRYPTO_KEY_FILE_EXISTS",
    "ERR_CRYPTO_KEY_NOT_PRIVATE",
    "ERR_CRYPTO_SIGNATURE_ENCODING",
  ],
  // ERR_CLI_INIT_NOT_EMPTY: `warden init` refuses a non-empty directory without --force.
  // ERR_CLI_INIT_INSIDE_CHECKOUT: `warden init` refuses a directory inside a git checkout that
  // git does not ignore (keys and token hashes would be committable) unless --inside-checkout.
  // ERR_CLI_HOST_FAILS_OPEN: `warden hooks install HOST` refuses a host that runs the tool when
  // its hook times out or crashes, unless --accept-fail-open acknowledges it.
  cli: [
    "ERR_CLI_USAGE",
    "ERR_CLI_INPUT",
    "ERR_CLI_INIT_NOT_EMPTY",
    "ERR_CLI_INIT_INSIDE_CHECKOUT",
    "ERR_CLI_HOST_FAILS_OPEN",
  ],
  gate: ["ERR_GATE_CONFIG_INVALID", "ERR_GATE_UNKNOWN_DECISION", "ERR_GATE_SCENARIO_INVALID"],
  // DARE evidence (src/evidence): the replay recorder, replay / what-if and the GATE export.
  evidence: [
    // A response snapshot's bytes no longer hash to the output_hash the journal holds.
    "ERR_EVIDENCE_SNAPSHOT_TAMPERED",
    // The journal names a response snapshot the evidence store does not hold.
    "ERR_EVIDENCE_SNAPSHOT_MISSING",
    // A pinned bundle's bytes no longer hash to the bundle hash the journal holds.
    "ERR_EVIDENCE_BUNDLE_TAMPERED",
    // A decision has no pinned bundle (recorded without the recorder) or the bundle file is gone.
    "ERR_EVIDENCE_BUNDLE_MISSING",
    // The journal holds no decision of the run (or time range) asked for.
    "ERR_EVIDENCE_RUN_UNKNOWN",
    // The journal failed verification; nothing is exported or replayed from it.
    "ERR_EVIDENCE_JOURNAL_INVALID",
    // The evidence store directory or a file in it is unusable (permissions, size bounds).
    "ERR_EVIDENCE_STORE",
    // The GATE export signs its LedgerEvents with the journal's private key and none was given.
    "ERR_EVIDENCE_LEDGER_KEY",
  ],
  context: [
    "ERR_CONTEXT_CONFIG_INVALID",
    "ERR_CONTEXT_RUN_MISMATCH",
    "ERR_CONTEXT_SESSION_CLOSED",
    "ERR_CONTEXT_FOREIGN_PREPARATION",
    "ERR_CONTEXT_ALREADY_RECORDED",
    "ERR_CONTEXT_NOT_ADMITTED",
    "ERR_CONTEXT_INPUT_INVALID",
    // A drift embedder cannot be used: its optional package or model directory is absent.
    "ERR_CONTEXT_EMBEDDER_UNAVAILABLE",
    // A drift embedder answered with an error or a malformed embedding (the call is denied).
    "ERR_CONTEXT_EMBEDDER_FAILED",
    // Unknown, ended, evicted or another principal's run (one answer: no ownership oracle).
    "ERR_RUN_UNKNOWN",
    // The principal (or the store) has as many open runs as its cap allows (HTTP 429).
    "ERR_RUN_LIMIT",
    // The run has proposed as many calls as `limits.maxCallsPerRun` allows (HTTP 429).
    "ERR_RUN_FULL",
    // A reservation was refused: the principal's calls per minute are used up (HTTP 429).
    "ERR_RUN_RATE_LIMITED",
    // A reservation was refused: the run's tool-call budget is used up, held calls included (HTTP 429).
    "ERR_RUN_BUDGET_EXHAUSTED",
    // Distributed mode: the run is served by another live replica (HTTP 421, details: node).
    "ERR_RUN_ELSEWHERE",
  ],
  integrity: [
    "ERR_INTEGRITY_CANONICAL",
    "ERR_INTEGRITY_CANONICALIZATION_UNSUPPORTED",
    "ERR_INTEGRITY_UNSIGNED",
    "ERR_INTEGRITY_SIGNATURE_FILE_INVALID",
    "ERR_INTEGRITY_SIGNATURE_ENCODING",
    "ERR_INTEGRITY_SIGNATURE_INVALID",
    "ERR_INTEGRITY_SIGNATURE_MISMATCH",
    "ERR_INTEGRITY_KEY_TYPE",
    "ERR_INTEGRITY_KEY_INVALID",
    "ERR_INTEGRITY_KEY_UNKNOWN",
    "ERR_INTEGRITY_KEY_REVOKED",
    "ERR_INTEGRITY_KEY_NOT_PINNED",
    "ERR_INTEGRITY_KEY_PIN_MISMATCH",
    "ERR_INTEGRITY_DISCOVERY_INVALID",
    "ERR_INTEGRITY_DOMAIN_MISMATCH",
    "ERR_INTEGRITY_REVOCATION_INVALID",
    "ERR_INTEGRITY_BUNDLE_INVALID",
    "ERR_INTEGRITY_BUNDLE_UNSIGNED",
    "ERR_INTEGRITY_BUNDLE_EXPIRED",
    "ERR_INTEGRITY_PIN_STORE",
    "ERR_INTEGRITY_FETCH",
    // trust store section of the runtime config malformed, a key/revocation file unreadable, or enforce without keys
    "ERR_INTEGRITY_TRUST_CONFIG",
  ],
  // Agent identity (AgentPin credentials, src/identity). Each AgentPin §6.7 code has one
  // ERR_IDENTITY_* twin (the verifier's result keeps the upstream code as `error_code`).
  identity: [
    // The credential is not a well-formed ES256 agentpin-credential+jwt (alg none/HS256, bad parts, oversized).
    "ERR_IDENTITY_ALGORITHM_REJECTED",
    // The JWT signature does not verify with the discovery key named by kid.
    "ERR_IDENTITY_SIGNATURE_INVALID",
    // No key with the credential's kid in the issuer's discovery document (or the JWK is unusable).
    "ERR_IDENTITY_KEY_NOT_FOUND",
    // The discovery key's exp has passed.
    "ERR_IDENTITY_KEY_EXPIRED",
    // The key is listed in the issuer's revocation document.
    "ERR_IDENTITY_KEY_REVOKED",
    // exp passed, iat/nbf in the future beyond the skew, or a lifetime over the max TTL / credential_ttl_max.
    "ERR_IDENTITY_CREDENTIAL_EXPIRED",
    // The credential's jti is revoked.
    "ERR_IDENTITY_CREDENTIAL_REVOKED",
    // sub is not an agent of the issuer's discovery document.
    "ERR_IDENTITY_AGENT_NOT_FOUND",
    // The agent is suspended, deprecated or revoked.
    "ERR_IDENTITY_AGENT_INACTIVE",
    // The credential claims a capability its discovery declaration does not cover.
    "ERR_IDENTITY_CAPABILITY_EXCEEDED",
    // The credential's constraints are wider than the discovery defaults.
    "ERR_IDENTITY_CONSTRAINT_VIOLATION",
    // A delegation attestation does not verify, or a link widens the capabilities.
    "ERR_IDENTITY_DELEGATION_INVALID",
    // The delegation chain is longer than the smallest max_delegation_depth in it.
    "ERR_IDENTITY_DELEGATION_DEPTH_EXCEEDED",
    // A discovery (or revocation) document could not be obtained (no bundle entry, fetch refused or failed).
    "ERR_IDENTITY_DISCOVERY_FETCH_FAILED",
    // A discovery document fails its schema, names another entity, or has no keys.
    "ERR_IDENTITY_DISCOVERY_INVALID",
    // The discovery document's entity is not the domain asked for.
    "ERR_IDENTITY_DOMAIN_MISMATCH",
    // The credential's aud is neither the verifier's audience nor "*".
    "ERR_IDENTITY_AUDIENCE_MISMATCH",
    // The issuer's key differs from the pinned one (TOFU); an operator must re-pin.
    "ERR_IDENTITY_KEY_PIN_MISMATCH",
    // The identity configuration (trust bundle, pin store, limits) is unusable.
    "ERR_IDENTITY_CONFIG_INVALID",
  ],
  tool: [
    "ERR_TOOL_MANIFEST_SYNTAX",
    "ERR_TOOL_MANIFEST_INVALID",
    "ERR_TOOL_TYPE_UNKNOWN",
    "ERR_TOOL_TEMPLATE_INVALID",
    "ERR_TOOL_CONDITION_INVALID",
    "ERR_TOOL_ARGS_INVALID",
    "ERR_TOOL_ARG_UNKNOWN",
    "ERR_TOOL_ARG_MISSING",
    "ERR_TOOL_ARG_TYPE",
    "ERR_TOOL_ARG_TOO_LONG",
    "ERR_TOOL_ARG_METACHAR",
    "ERR_TOOL_ARG_INVISIBLE",
    "ERR_TOOL_ARG_PATTERN",
    "ERR_TOOL_ARG_RANGE",
    "ERR_TOOL_ARG_ENUM",
    "ERR_TOOL_ARG_FORMAT",
    "ERR_TOOL_ARG_TRAVERSAL",
    "ERR_TOOL_ARG_ABSOLUTE_PATH",
    "ERR_TOOL_ARG_SCHEME",
    "ERR_TOOL_ARG_OUT_OF_SCOPE",
    "ERR_TOOL_ARG_FILE",
    // A structured (json) argument's serialised size is over the bound.
    "ERR_TOOL_ARG_JSON_TOO_LARGE",
    // A structured argument nests deeper than the bound.
    "ERR_TOOL_ARG_JSON_TOO_DEEP",
    // A structured argument has an object with too many keys or an array that is too long.
    "ERR_TOOL_ARG_JSON_TOO_MANY",
    // A structured argument has a `__proto__`, `constructor` or `prototype` key (or a duplicate after NFKC).
    "ERR_TOOL_ARG_JSON_UNSAFE_KEY",
    // A structured argument does not satisfy the argument's pinned JSON Schema.
    "ERR_TOOL_ARG_JSON_SCHEMA",
    // A json argument in a contract without [mcp], or a schema that is remote, unsafe or does not compile strictly.
    "ERR_TOOL_ARG_JSON_CONTRACT",
    "ERR_TOOL_RUNTIME_VAR_MISSING",
    "ERR_TOOL_SECRET_MISSING",
    "ERR_TOOL_SECRET_INVALID",
    "ERR_TOOL_OUTPUT_TOO_LARGE",
    "ERR_TOOL_OUTPUT_PARSE",
    "ERR_TOOL_OUTPUT_PARSER_UNSUPPORTED",
    "ERR_TOOL_OUTPUT_SCHEMA",
    "ERR_TOOL_REGISTRY_IO",
    "ERR_TOOL_REGISTRY_DUPLICATE",
    "ERR_TOOL_REGISTRY_UNVERIFIED",
  ],
  journal: [
    "ERR_JOURNAL_TYPE_INVALID",
    "ERR_JOURNAL_TYPE_UNKNOWN",
    "ERR_JOURNAL_TYPE_EXISTS",
    "ERR_JOURNAL_BODY_INVALID",
    "ERR_JOURNAL_ENTRY_INVALID",
    "ERR_JOURNAL_SENSITIVE_PATH",
    "ERR_JOURNAL_KEY_TYPE",
    "ERR_JOURNAL_KEY_MISMATCH",
    "ERR_JOURNAL_CHAIN_BROKEN",
    "ERR_JOURNAL_HEAD_INVALID",
    "ERR_JOURNAL_CLOSED",
    "ERR_JOURNAL_STORE",
    "ERR_JOURNAL_FENCED",
  ],
  policy: [
    "ERR_POLICY_FILE",
    "ERR_POLICY_TOO_LARGE",
    "ERR_POLICY_YAML_SYNTAX",
    "ERR_POLICY_SCHEMA",
    "ERR_POLICY_DUPLICATE_RULE",
    "ERR_POLICY_PRIORITY_LAYER",
    "ERR_POLICY_REGEX_UNSAFE",
    "ERR_POLICY_REGEX_INVALID",
    "ERR_POLICY_MODIFY_PATH",
    "ERR_POLICY_CEDAR_SCHEMA",
    "ERR_POLICY_CEDAR_PARSE",
    "ERR_POLICY_CEDAR_VALIDATION",
    "ERR_POLICY_CEDAR_ANNOTATION",
    "ERR_POLICY_CEDAR_EVALUATION",
    "ERR_POLICY_EMPTY_BUNDLE",
  ],
  runtime: [
    // The principal state file cannot be opened or created.
    "ERR_RUNTIME_STATE_OPEN",
    // A persisted principal record does not parse (a fault, never read as "no quarantine").
    "ERR_RUNTIME_STATE_CORRUPT",
    // The runtime configuration is incomplete or contradictory (e.g. contracts named twice).
    "ERR_RUNTIME_CONFIG_INVALID",
    // The shared database's schema version is missing, older or unknown to this Warden (run `warden db migrate`).
    "ERR_RUNTIME_STORE_SCHEMA",
    // The shared database (PostgreSQL) cannot be reached or a statement failed: nothing is decided (fail closed).
    "ERR_RUNTIME_STORE_UNAVAILABLE",
  ],
  trust: [
    // The trust engine's configuration (defaults, overrides, --config file) is malformed.
    "ERR_TRUST_CONFIG_INVALID",
    // A trust event (a simulate input line, an event handed to the engine) is malformed.
    "ERR_TRUST_EVENT_INVALID",
    // The trust table store cannot be opened, or a stored row does not parse (fail closed).
    "ERR_TRUST_STORE_OPEN",
    "ERR_TRUST_STORE_CORRUPT",
    // An ECT is not a well-formed JWT with the ECT claims.
    "ERR_TRUST_ECT_MALFORMED",
    // An unsigned (alg none, L1) ECT where L2 or L3 is configured: a downgrade, refused.
    "ERR_TRUST_ECT_UNSIGNED",
    // An ECT's key (iss, kid) is not one the verifier knows.
    "ERR_TRUST_ECT_KEY_UNKNOWN",
    // An ECT's signature does not verify (an attestation_invalid trust event).
    "ERR_TRUST_ECT_SIGNATURE_INVALID",
    // An ECT is past its exp, or issued in the future beyond the allowed skew.
    "ERR_TRUST_ECT_EXPIRED",
    // L2/L3 emission configured without a signing key.
    "ERR_TRUST_ECT_SIGNER_MISSING",
    // L3 DAG validation: a jti already in the ledger, a par that does not resolve, a cycle,
    // a child issued before its parent.
    "ERR_TRUST_ECT_DUPLICATE",
    "ERR_TRUST_ECT_PARENT_UNKNOWN",
    "ERR_TRUST_ECT_CYCLE",
    "ERR_TRUST_ECT_TIME_ORDER",
    // A journal append of the L3 ledger failed after validation: the ledger refuses further appends.
    "ERR_TRUST_LEDGER_FAILED",
    // A trust assertion that is not an apae:trust_assertion, or arrived beyond the max hops.
    "ERR_TRUST_ASSERTION_INVALID",
    "ERR_TRUST_ASSERTION_HOPS",
    // Early quarantine lift refusals: malformed record, wrong scope, unknown approver key,
    // bad signature, a record for another quarantine episode, a subject not quarantined.
    "ERR_TRUST_LIFT_INVALID",
    // A lift record with no approver signature at all (HTTP 401).
    "ERR_TRUST_LIFT_UNSIGNED",
    "ERR_TRUST_LIFT_SCOPE",
    "ERR_TRUST_LIFT_APPROVER_UNKNOWN",
    "ERR_TRUST_LIFT_SIGNATURE_INVALID",
    "ERR_TRUST_LIFT_STALE",
    "ERR_TRUST_NOT_QUARANTINED",
    // A request from an agent below a policy's APAE trust threshold (apae.min_trust /
    // min_confidence): denied, HTTP 403 in the sidecar.
    "ERR_TRUST_BELOW_THRESHOLD",
    // The agent is in trust quarantine: new runs and delegations are refused (HTTP 503 with
    // Retry-After until the quarantine ends).
    "ERR_TRUST_QUARANTINED",
    // A behaviour specification that does not parse, or is not signed by a configured key.
    "ERR_TRUST_SPEC_INVALID",
    "ERR_TRUST_SPEC_SIGNATURE_INVALID",
    // Cross-domain delegation without a bilateral agreement with that domain, or below the
    // agreement's minimum ECT assurance.
    "ERR_TRUST_DOMAIN_NO_AGREEMENT",
    "ERR_TRUST_DOMAIN_ASSURANCE",
    // The peer domain's trust anchor, required by the agreement, could not be fetched (SSRF
    // rule, redirect, size, timeout) or is not that domain's anchor document.
    "ERR_TRUST_DOMAIN_ANCHOR_UNAVAILABLE",
    // The assurance profile (Regulated) requires a mechanism the deployment does not configure:
    // the start is refused.
    "ERR_TRUST_PROFILE_UNMET",
  ],
  hooks: [
    // An AARTS event that is not JSON, not an object, or fails its hook point's schema.
    "ERR_HOOK_EVENT_INVALID",
    // An AARTS event naming a hook point the engine does not know.
    "ERR_HOOK_POINT_UNKNOWN",
    // An event before a compatible version handshake, or after an incompatible one.
    "ERR_HOOK_HANDSHAKE_REQUIRED",
    // The engine did not answer within the hook's blocking-mode timeout.
    "ERR_HOOK_TIMEOUT",
    // The engine failed while evaluating an event (the failure policy decides the verdict).
    "ERR_HOOK_ENGINE_FAULT",
    // A stdio line over the transport's size limit.
    "ERR_HOOK_LINE_TOO_LARGE",
    // The engine's or an adapter's configuration is malformed.
    "ERR_HOOK_CONFIG_INVALID",
    // The sidecar already holds its configured maximum of per-host engines (hooks.maxEngines).
    "ERR_HOOK_ENGINE_LIMIT",
    // The hook daemon (docs/hooks-daemon.md): a caller without this state directory's token;
    // the stdio engine: a host-only event (PostAskResolution, SessionStart, SessionEnd) on a
    // connection whose handshake did not present the host secret (docs/hooks-files.md).
    "ERR_HOOK_UNAUTHENTICATED",
    // The hook daemon's HTTP listener: a request a browser sent (it carries an Origin header).
    "ERR_HOOK_ORIGIN_REFUSED",
    // A hook event over the daemon's size limit (16 MiB).
    "ERR_HOOK_EVENT_TOO_LARGE",
    // The lean command entry could not reach or start the hook daemon (the host is told to block).
    "ERR_HOOK_DAEMON_UNAVAILABLE",
    // A PostAskResolution names no ask this engine issued and recorded in this session (or
    // its record's MAC does not verify): nothing is remembered.
    "ERR_HOOK_ASK_UNKNOWN",
    // A PostAskResolution names an ask that was already resolved (a replay).
    "ERR_HOOK_ASK_REPLAYED",
    // A PostAskResolution names an ask older than its time to live.
    "ERR_HOOK_ASK_EXPIRED",
    // Poisoned sessions alone fill the hook state's bound: a new session is refused rather
    // than a poisoned one forgotten (a human clears sessions with `warden hooks clear`).
    "ERR_HOOK_STATE_FULL",
  ],
  loop: ["ERR_LOOP_STALE_PHASE", "ERR_LOOP_FORGED_PHASE", "ERR_LOOP_CONFIG_INVALID"],
  model: [
    "ERR_MODEL_CONFIG_INVALID",
    "ERR_MODEL_API_KEY_MISSING",
    "ERR_MODEL_HTTP_STATUS",
    "ERR_MODEL_RESPONSE_INVALID",
    "ERR_MODEL_RESPONSE_TOO_LARGE",
    "ERR_MODEL_TIMEOUT",
    "ERR_MODEL_NETWORK",
    "ERR_MODEL_ABORTED",
    "ERR_MODEL_SCRIPT_INVALID",
    "ERR_MODEL_SCRIPT_EXHAUSTED",
  ],
  executor: [
    "ERR_EXEC_CONFIG_INVALID",
    "ERR_EXEC_PARAMS_INVALID",
    "ERR_EXEC_CIRCUIT_OPEN",
    "ERR_EXEC_TIMEOUT",
    "ERR_EXEC_CANCELLED",
    "ERR_EXEC_OUTPUT_TOO_LARGE",
    "ERR_EXEC_INPUT_TOO_LARGE",
    "ERR_EXEC_TOOL_FAILED",
    "ERR_EXEC_IO",
    "ERR_EXEC_URL_INVALID",
    "ERR_EXEC_SSRF_BLOCKED",
    "ERR_EXEC_HOST_NOT_ALLOWED",
    "ERR_EXEC_DNS",
    "ERR_EXEC_REDIRECT_LIMIT",
    // A cross-origin redirect would carry a secret (in the kept body or the new URL): not followed.
    "ERR_EXEC_REDIRECT_BLOCKED",
    "ERR_EXEC_CONTENT_TYPE",
    "ERR_EXEC_PATH_INVALID",
    "ERR_EXEC_PATH_INVISIBLE",
    "ERR_EXEC_PATH_LOOKALIKE",
    "ERR_EXEC_PATH_TRAVERSAL",
    "ERR_EXEC_PATH_OUTSIDE_ROOT",
    "ERR_EXEC_PATH_SYMLINK",
    "ERR_EXEC_PATH_RACE",
    "ERR_EXEC_PATH_NOT_FOUND",
    "ERR_EXEC_PATH_TYPE",
    "ERR_EXEC_PATH_EXISTS",
    "ERR_EXEC_BINARY_UNTRUSTED",
    "ERR_EXEC_BINARY_NOT_FOUND",
    "ERR_EXEC_CWD_OUTSIDE",
    "ERR_EXEC_SQL_MULTIPLE",
    "ERR_EXEC_SQL_SYNTAX",
    "ERR_EXEC_SQL_CLASS",
    "ERR_EXEC_SQL_PARAMS",
    "ERR_EXEC_SQL_ROW_LIMIT",
    "ERR_EXEC_MCP_TOOL_UNKNOWN",
    "ERR_EXEC_MCP_TOOL_CHANGED",
    "ERR_EXEC_MCP_PIN_STORE",
    "ERR_EXEC_MCP_PROTOCOL",
    // The decision carried an obligation this execution could not meet (no signed approval for
    // require_hitl, rate limit reached, no notifier, output not maskable, unknown type): refused.
    "ERR_EXEC_OBLIGATION_UNMET",
    // A tool whose description or schema carries hidden instructions (tag characters, invisible text, injection phrases, shadowing).
    "ERR_EXEC_MCP_TOOL_FLAGGED",
    // A call or contract names an MCP upstream the deployment did not declare.
    "ERR_EXEC_MCP_UPSTREAM_UNKNOWN",
    // A contract or risk tier requires a sandbox tier (namespace, container) this machine
    // cannot provide (no bwrap, no working docker/podman): refused, never run weaker.
    "ERR_EXEC_SANDBOX_UNAVAILABLE",
    // The process was killed by one of its resource limits (CPU, memory, file size, files, processes).
    "ERR_EXEC_RESOURCE_LIMIT",
  ],
  mcpGateway: [
    // The gateway configuration is invalid (the message names the field).
    "ERR_MCP_CONFIG_INVALID",
    // An HTTP session without a valid bearer token or AgentPin credential.
    "ERR_MCP_AUTH",
    // The Gate did not allow the call, read or prompt (the decision and reasons are in the error data).
    "ERR_MCP_DENIED",
    // A tool, resource or prompt the calling principal cannot see.
    "ERR_MCP_NOT_FOUND",
    // The principal holds its share of the gateway's sessions (http.maxSessionsPerPrincipal): 429.
    "ERR_MCP_SESSION_LIMIT",
    // The principal has its share of requests in flight (http.maxInFlightPerPrincipal): 429, retry.
    "ERR_MCP_BUSY",
  ],
  memory: [
    // The memory firewall's configuration is malformed.
    "ERR_MEMORY_CONFIG_INVALID",
    // The Gate did not allow the memory operation (the reason codes say why).
    "ERR_MEMORY_DENIED",
    // No memory with that id is visible to this principal and run (another principal's is not found either).
    "ERR_MEMORY_NOT_FOUND",
    // The memory's classification is above the principal's clearance (read) or the write asks for one above it.
    "ERR_MEMORY_CLASSIFIED",
    // The content reads as instructions addressed to an agent (memory poisoning): not stored.
    "ERR_MEMORY_INSTRUCTION",
    // The memory is quarantined as poisoned: it is never returned.
    "ERR_MEMORY_QUARANTINED",
    // A bound of the store (records, per-principal records, content size) would be exceeded.
    "ERR_MEMORY_LIMIT",
    // The memory store could not be opened, read or written (fail closed).
    "ERR_MEMORY_STORE",
  ],
  capability: [
    // A capability token that is malformed, not signed by this runtime's key, or tampered with.
    "ERR_CAPABILITY_INVALID",
    // A capability token past its expiry.
    "ERR_CAPABILITY_EXPIRED",
    // A capability token whose uses are all spent (counted atomically in the budget ledger).
    "ERR_CAPABILITY_EXHAUSTED",
    // A capability token presented for another run, principal or tool than it was issued for.
    "ERR_CAPABILITY_SCOPE",
    // A capability token presented after its run ended (a replay).
    "ERR_CAPABILITY_RUN_ENDED",
    // The call's parameters are outside the capability's constraints.
    "ERR_CAPABILITY_CONSTRAINT",
    // A capability token issued to a principal before its grants were revoked (APAE trust below the revocation floor).
    "ERR_CAPABILITY_REVOKED",
    // The token's use could not be counted (the ledger's store failed): nothing executed, retry (503 at the edge).
    "ERR_CAPABILITY_UNAVAILABLE",
    // A grant request that cannot be issued: unknown run, bad constraints, ttl or uses out of bounds.
    "ERR_CAPABILITY_GRANT_INVALID",
  ],
  delegation: [
    // A delegation link that is malformed or whose signature does not verify under its delegator's key.
    "ERR_DELEGATION_INVALID",
    // A delegation link that grants more than its delegator holds (details: link index and field).
    "ERR_DELEGATION_WIDENS",
    // A delegation chain longer than the configured maximum depth.
    "ERR_DELEGATION_DEPTH",
    // A delegation chain whose links do not connect (a delegator other than the previous delegate) or whose root is not trusted.
    "ERR_DELEGATION_BROKEN",
    // A delegation link past its expiry.
    "ERR_DELEGATION_EXPIRED",
    // A call in a delegated run outside the run's grant (tool not granted, grant expired, delegated tool calls spent).
    "ERR_DELEGATION_CEILING",
  ],
  messaging: [
    // A sealed message's signature, AEAD tag, header or ciphertext does not verify (tampered or forged).
    "ERR_MESSAGE_TAMPERED",
    // The message's expires_at is past (beyond the allowed clock skew), or its time is in the future.
    "ERR_MESSAGE_EXPIRED",
    // The message's nonce was seen before (the nonce store survives restarts).
    "ERR_MESSAGE_REPLAYED",
    // The message is sealed for another recipient than the one opening it.
    "ERR_MESSAGE_WRONG_RECIPIENT",
    // The message is unsigned, unencrypted or names another algorithm: a downgrade is refused.
    "ERR_MESSAGE_UNSIGNED",
    // The sender, or the key it names, is not a registered messaging identity.
    "ERR_MESSAGE_SENDER_UNKNOWN",
    // The sealed message does not parse (shape, sizes, encodings).
    "ERR_MESSAGE_MALFORMED",
    // The communication gate's policy refused the message (who may talk to whom, primitive, type, depth).
    "ERR_MESSAGE_DENIED",
    // The recipient's inbox is full, or the nonce store is full of unexpired nonces (fail closed).
    "ERR_MESSAGE_INBOX_FULL",
    // A principal asked for another principal's inbox, or sent as someone else.
    "ERR_MESSAGE_FORBIDDEN",
  ],
  approval: [
    "ERR_APPROVAL_NOT_FOUND",
    "ERR_APPROVAL_FORBIDDEN",
    "ERR_APPROVAL_INVALID",
    // Approver keys are configured and the decision carries no approver signature.
    "ERR_APPROVAL_UNSIGNED",
    // The signature does not verify under a key registered for that approver (a non-approver key, or altered fields).
    "ERR_APPROVAL_SIGNATURE_INVALID",
    // The signed statement names another decision than the one being decided.
    "ERR_APPROVAL_WRONG_DECISION",
    // The same approver signature was presented before, or its time is outside the allowed skew.
    "ERR_APPROVAL_REPLAYED",
    // The item was already answered (first valid answer wins); the message names who answered and how.
    "ERR_APPROVAL_ALREADY_DECIDED",
  ],
  server: [
    "ERR_SERVER_CONFIG_INVALID",
    // The configured journal key file does not exist (the message names the command that creates it).
    "ERR_SERVER_JOURNAL_KEY_MISSING",
    "ERR_AUTH_MISSING",
    "ERR_AUTH_INVALID",
    "ERR_AUTH_FORBIDDEN",
    "ERR_AUTH_PRINCIPAL_MISMATCH",
    "ERR_SERVER_BODY_TOO_LARGE",
    "ERR_SERVER_BODY_MALFORMED",
    "ERR_SERVER_MEDIA_TYPE",
    "ERR_SERVER_REQUEST_INVALID",
    "ERR_SERVER_NOT_FOUND",
    "ERR_SERVER_RUN_NOT_FOUND",
    "ERR_SERVER_RUN_FORBIDDEN",
    "ERR_SERVER_RATE_LIMITED",
    // The principal's share of the decision queue is full (limits.maxInFlightPerPrincipal), or the queue sheds it: 429, retry.
    "ERR_SERVER_BUSY",
    "ERR_SERVER_NO_EXECUTOR",
    "ERR_SERVER_JOURNAL_UNAVAILABLE",
    // Idempotency-Key (POST /v1/execute): the key's first attempt has no outcome yet / the key was used for another request.
    "ERR_SERVER_IDEMPOTENCY_PENDING",
    "ERR_SERVER_IDEMPOTENCY_MISMATCH",
    "ERR_SERVER_POLICY_ERROR",
    "ERR_SERVER_SHUTTING_DOWN",
    "ERR_SERVER_INTERNAL",
  ],
  // The console's audit views (src/console/views): shown in the page, never as a stack trace.
  consoleViews: [
    // A console page's query or an action's form failed validation (bad run id, range, size).
    "ERR_CONSOLE_VIEW_INPUT",
    // The run or journal entry asked for is not in the journal.
    "ERR_CONSOLE_VIEW_NOT_FOUND",
    // The view needs what this deployment lacks (a SQLite journal, the entry point's replay host, a journal small enough).
    "ERR_CONSOLE_VIEW_UNAVAILABLE",
  ],
  adapter: [
    // Misuse of a framework adapter: no contract (or model view) for the tool, a bad sidecar URL or token, a bad bound.
    "ERR_ADAPTER_CONFIG_INVALID",
    // The Gate (or the contract check before it) refused the call; the model sees a structured tool error.
    "ERR_ADAPTER_DENIED",
    // A step-up (or deferral) was not approved within its timeout or the adapter's wait bound: denied and journaled.
    "ERR_ADAPTER_STEP_UP_TIMEOUT",
    // HTTP mode: the sidecar did not answer within the adapter's wait bound (its wait is cancelled and journaled).
    "ERR_ADAPTER_TIMEOUT",
    // HTTP mode: the sidecar could not be reached, or answered something that is not its documented shape.
    "ERR_ADAPTER_SIDECAR_UNAVAILABLE",
    // Library mode: no executor in the composed runtime serves the contract's backend.
    "ERR_ADAPTER_NO_EXECUTOR",
    // The Gate failed while deciding or recording a result: nothing more is executed (fail closed).
    "ERR_ADAPTER_GATE_FAULT",
  ],
  console: [
    // No console session, or it ended (idle timeout, lifetime, sign-out, evicted): sign in again.
    "ERR_CONSOLE_SESSION",
    // A state-changing console request without this session's CSRF token (missing, wrong, another session's) or from another origin.
    "ERR_CONSOLE_CSRF",
    // The signed-in principal lacks the console role (approver, auditor) the page or action needs.
    "ERR_CONSOLE_FORBIDDEN",
    // The action needs a recent sign-in (browser key registration): sign in again.
    "ERR_CONSOLE_NOT_FRESH",
    // Too many sign-in attempts from this address (or in all): wait.
    "ERR_CONSOLE_SIGN_IN_LIMITED",
    // The token is not an approver or auditor credential.
    "ERR_CONSOLE_SIGN_IN_INVALID",
    // A browser key that is not an Ed25519 public key, or the approver's key slots (or the store) are full.
    "ERR_CONSOLE_KEY_INVALID",
    // A console form that does not parse (missing field, wrong type, too long, parameters outside the contract).
    "ERR_CONSOLE_FORM_INVALID",
    // The console section or its key store cannot be used: the sidecar does not start.
    "ERR_CONSOLE_CONFIG_INVALID",
    // Too many live queue connections (console.maxStreams): retry later.
    "ERR_CONSOLE_BUSY",
    // A one-time approval link that is unknown, malformed or expired (docs/console.md#approvals-anywhere).
    "ERR_CONSOLE_LINK_INVALID",
  ],
} as const;
