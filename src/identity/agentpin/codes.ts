// The AgentPin §6.7 verification codes and their Warden twins. The verifier's result keeps
// the upstream spelling (`error_code`, what auditors and the upstream SDKs compare); the
// runtime and the sidecar speak the ERR_IDENTITY_* codes of src/contracts/errors.ts.

export const AGENTPIN_CODES = [
  "SIGNATURE_INVALID",
  "KEY_NOT_FOUND",
  "KEY_EXPIRED",
  "KEY_REVOKED",
  "CREDENTIAL_EXPIRED",
  "CREDENTIAL_REVOKED",
  "AGENT_NOT_FOUND",
  "AGENT_INACTIVE",
  "CAPABILITY_EXCEEDED",
  "CONSTRAINT_VIOLATION",
  "DELEGATION_INVALID",
  "DELEGATION_DEPTH_EXCEEDED",
  "DISCOVERY_FETCH_FAILED",
  "DISCOVERY_INVALID",
  "DOMAIN_MISMATCH",
  "AUDIENCE_MISMATCH",
  "ALGORITHM_REJECTED",
  "KEY_PIN_MISMATCH",
] as const;

export type AgentPinCode = (typeof AGENTPIN_CODES)[number];

/** The Warden twin of an AgentPin code (every one is in src/contracts/errors.ts). */
export type IdentityVerifyCode = `ERR_IDENTITY_${AgentPinCode}`;

/** The Warden error code of an AgentPin verification code. */
export function wardenCodeOf(code: AgentPinCode): IdentityVerifyCode {
  return `ERR_IDENTITY_${code}`;
}

/** A step's failure: the code the result reports and a message without token material. */
export interface Failure {
  ok: false;
  code: AgentPinCode;
  message: string;
}

/** The outcome of one verification step. */
export type Step<T> = { ok: true; value: T } | Failure;

export const fail = (code: AgentPinCode, message: string): Failure => ({ ok: false, code, message });
export const done = <T>(value: T): Step<T> => ({ ok: true, value });
