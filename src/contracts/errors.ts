// Warden's error model: one base class with a stable string code, one subclass per
// family. Expected outcomes (denials, failed verifications) are values, not errors;
// these are thrown only for misuse and faults. Messages never carry secrets or tokens.

import { ERROR_CODES } from "./error-codes.js";

export { ERROR_CODES };

type Families = typeof ERROR_CODES;
export type ErrorFamily = keyof Families;
export type WardenErrorCode = Families[ErrorFamily][number];

const ALL_CODES: ReadonlySet<string> = new Set(Object.values(ERROR_CODES).flat());

export function isWardenErrorCode(code: string): code is WardenErrorCode {
  return ALL_CODES.has(code);
}

export interface WardenErrorOptions {
  cause?: unknown;
  /** Structured, non-secret details (argument names, seq numbers, paths). */
  details?: Record<string, unknown>;
}

export class WardenError extends Error {
  readonly code: WardenErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: WardenErrorCode, message: string, options: WardenErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.details = options.details;
  }
}

type CodeOf<F extends ErrorFamily> = Families[F][number];

export class CanonicalJsonError extends WardenError {
  constructor(code: CodeOf<"canon">, message: string, options?: WardenErrorOptions) {
    super(code, message, options);
  }
}

export class ContractError extends WardenError {
  constructor(code: CodeOf<"contract">, message: string, options?: WardenErrorOptions) {
    super(code, message, options);
  }
}

export class CryptoError extends WardenError {
  constructor(code: CodeOf<"crypto">, message: string, options?: WardenErrorOptions) {
    super(code, message, options);
  }
}

export class CliError extends WardenError {
  constructor(code: CodeOf<"cli">, message: string, options?: WardenErrorOptions) {
    super(code, message, options);
  }
}

export class GateError extends WardenError {
  constructor(code: CodeOf<"gate">, message: string, options?: WardenErrorOptions) {
    super(code, message, options);
  }
}

/** Tool contract integrity: SchemaPin signatures, discovery, revocation, pins, bundles. */
export class IntegrityError extends WardenError {
  constructor(code: CodeOf<"integrity">, message: string, options?: WardenErrorOptions) {
    super(code, message, options);
  }
}

export class JournalError extends WardenError {
  constructor(code: CodeOf<"journal">, message: string, options?: WardenErrorOptions) {
    super(code, message, options);
  }
}

export class ToolError extends WardenError {
  constructor(code: CodeOf<"tool">, message: string, options?: WardenErrorOptions) {
    super(code, message, options);
  }
}

export class ContextError extends WardenError {
  constructor(code: CodeOf<"context">, message: string, options?: WardenErrorOptions) {
    super(code, message, options);
  }
}

/** Agent identity: AgentPin credentials, discovery, pins, configuration. */
export class IdentityError extends WardenError {
  constructor(code: CodeOf<"identity">, message: string, options?: WardenErrorOptions) {
    super(code, message, options);
  }
}

/** Narrow an unknown thrown value to a WardenError with the given code. */
export function hasErrorCode(err: unknown, code: WardenErrorCode): err is WardenError {
  return err instanceof WardenError && err.code === code;
}

export class PolicyError extends WardenError {
  constructor(code: CodeOf<"policy">, message: string, options?: WardenErrorOptions) {
    super(code, message, options);
  }
}

/** The composition root: principal state store, runtime configuration. */
export class RuntimeError extends WardenError {
  constructor(code: CodeOf<"runtime">, message: string, options?: WardenErrorOptions) {
    super(code, message, options);
  }
}

/** APAE trust: the trust engine and its store, ECTs, quarantine lifts. */
export class TrustError extends WardenError {
  constructor(code: CodeOf<"trust">, message: string, options?: WardenErrorOptions) {
    super(code, message, options);
  }
}

/** AARTS hooks: malformed events, handshakes, timeouts, engine faults. */
export class HookError extends WardenError {
  constructor(code: CodeOf<"hooks">, message: string, options?: WardenErrorOptions) {
    super(code, message, options);
  }
}

/** The ORGA loop: phase objects used out of order, forged, or misconfigured. */
export class LoopError extends WardenError {
  constructor(code: CodeOf<"loop">, message: string, options?: WardenErrorOptions) {
    super(code, message, options);
  }
}

/** Model adapters: transport, response parsing, scripts. */
export class ModelError extends WardenError {
  constructor(code: CodeOf<"model">, message: string, options?: WardenErrorOptions) {
    super(code, message, options);
  }
}

/** Executors: tickets, circuit breakers, SSRF, paths, binaries, SQL, MCP pins. */
export class ExecutorError extends WardenError {
  constructor(code: CodeOf<"executor">, message: string, options?: WardenErrorOptions) {
    super(code, message, options);
  }
}

/** The memory firewall: configuration, refused operations, store faults. */
export class MemoryError extends WardenError {
  constructor(code: CodeOf<"memory">, message: string, options?: WardenErrorOptions) {
    super(code, message, options);
  }
}

/** Capability tokens: issuing (grant) misuse; refusals at verification are values. */
export class CapabilityError extends WardenError {
  constructor(code: CodeOf<"capability">, message: string, options?: WardenErrorOptions) {
    super(code, message, options);
  }
}

/** Delegation grants: misuse when issuing; refusals at verification are values. */
export class DelegationError extends WardenError {
  constructor(code: CodeOf<"delegation">, message: string, options?: WardenErrorOptions) {
    super(code, message, options);
  }
}

/** The sidecar server: configuration, authentication, request limits, fail-closed faults. */
export class ServerError extends WardenError {
  constructor(code: CodeOf<"server">, message: string, options?: WardenErrorOptions) {
    super(code, message, options);
  }
}

/** The MCP gateway (src/mcp-gateway): configuration, session credentials, governed refusals. */
export class McpGatewayError extends WardenError {
  constructor(code: CodeOf<"mcpGateway">, message: string, options?: WardenErrorOptions) {
    super(code, message, options);
  }
}

/** DARE evidence: recorder, replay, what-if, GATE export (src/evidence). */
export class EvidenceError extends WardenError {
  constructor(code: CodeOf<"evidence">, message: string, options?: WardenErrorOptions) {
    super(code, message, options);
  }
}

/** Sealed inter-agent messages and the communication gate (src/messaging). */
export class MessagingError extends WardenError {
  constructor(code: CodeOf<"messaging">, message: string, options?: WardenErrorOptions) {
    super(code, message, options);
  }
}

/** The framework adapters (src/adapters): misuse of a governed tool's configuration. */
export class AdapterError extends WardenError {
  constructor(code: CodeOf<"adapter">, message: string, options?: WardenErrorOptions) {
    super(code, message, options);
  }
}

/** The approval console (src/console): sessions, CSRF, roles, sign-in pacing, browser keys. */
export class ConsoleError extends WardenError {
  constructor(code: CodeOf<"console">, message: string, options?: WardenErrorOptions) {
    super(code, message, options);
  }
}
