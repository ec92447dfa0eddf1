// `npm test`: the project's own tests; they need Node and the clone's `npm install`, nothing else.
// The tests that need an operating-system package (bubblewrap) run with `npm run test:system`
// (vitest.system.config.ts, listed in test/system-tests.ts); the interop tests (test/interop)
// run with `npm run test:interop`.
import { defineConfig } from "vitest/config";
import { packageAliases } from "./test/package-aliases.js";
import { SYSTEM_TESTS } from "./test/system-tests.js";

export default defineConfig({
  resolve: { alias: packageAliases() },
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/interop/**", "**/node_modules/**", ...SYSTEM_TESTS],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});
