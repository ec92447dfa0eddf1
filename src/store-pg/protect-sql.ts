// Migration 10 (issue 36): protective state every replica reads at once, and the last
// reservations that held row locks across client round trips turned into single statements.
//  - principal_revocations: APAE revocation floors (revocation-floors.ts), written before the
//    answer that caused them, read by every replica's capability token check.
export const PROTECT_MIGRATION_SQL = `
CREATE TABLE principal_revocations (
  principal_id text PRIMARY KEY,
  at           bigint NOT NULL
);`;
