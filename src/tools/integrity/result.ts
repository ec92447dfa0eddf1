// Outcome type shared by the integrity module. A failed verification is an expected
// outcome and is returned as a value carrying a stable ERR_INTEGRITY_* code; inside the
// module a failure is thrown as an IntegrityError and converted once at the public edge,
// which keeps each verification pipeline a straight line.
import { type ERROR_CODES, IntegrityError } from "../../contracts/index.js";

export type IntegrityCode = (typeof ERROR_CODES)["integrity"][number];

export type IntegrityFailure = { ok: false; code: IntegrityCode; message: string };
export type IntegrityResult<T extends object> = ({ ok: true } & T) | IntegrityFailure;

export function fail(code: IntegrityCode, message: string, cause?: unknown): never {
  throw new IntegrityError(code, message, cause === undefined ? {} : { cause });
}

/** Runs `fn`; an IntegrityError becomes `{ok:false}`, anything else is a fault and propagates. */
export function attempt<T extends object>(fn: () => T): IntegrityResult<T> {
  try {
    return { ok: true, ...fn() };
  } catch (err) {
    if (err instanceof IntegrityError) {
      return { ok: false, code: err.code as IntegrityCode, message: err.message };
    }
    throw err;
  }
}

export async function attemptAsync<T extends object>(fn: () => Promise<T>): Promise<IntegrityResult<T>> {
  try {
    return { ok: true, ...(await fn()) };
  } catch (err) {
    if (err instanceof IntegrityError) {
      return { ok: false, code: err.code as IntegrityCode, message: err.message };
    }
    throw err;
  }
}
