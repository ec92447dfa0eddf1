// The tests that need an operating-system package, bubblewrap (the namespace sandbox tier and
// the coding-agent containment): `npm run test:system` runs them (vitest.system.config.ts) and
// `npm test` leaves them out, so `npm install && npm test` needs Node and nothing else.
// `.ci/run` installs bubblewrap and runs both. Each of these fails, never skips, without bwrap.
export const SYSTEM_TESTS: string[] = [];
