// Type-level guarantees of the integrity API, checked by `tsc` (npm run typecheck):
// a verification result must be narrowed before its fields are read, failure codes are
// the ERR_INTEGRITY_* family only, and hash modes are a closed set.
import type {
  HashMode,
  IntegrityCode,
  IntegrityResult,
  Verified,
} from "../../../src/tools/integrity/index.js";

declare const r: IntegrityResult<Verified>;

// @ts-expect-error the fingerprint exists only on a verified result
export const unchecked: string = r.fingerprint;

export const checked: string = r.ok ? r.fingerprint : r.code;

// @ts-expect-error a failed result carries no key id
export const noKey = !r.ok && r.keyId;

// @ts-expect-error codes of other families are not integrity codes
export const foreign: IntegrityCode = "ERR_CRYPTO_KEY_TYPE";

export const own: IntegrityCode = "ERR_INTEGRITY_KEY_REVOKED";

// @ts-expect-error only "double" and "single" exist
export const triple: HashMode = "triple";
