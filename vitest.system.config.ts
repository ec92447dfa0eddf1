// `npm run test:system`: the tests that need operating-system packages (bubblewrap, python3),
// listed in test/system-tests.ts; `.ci/run` installs the packages and runs this set.
import { defineConfig } from "vitest/config";
import { packageAliases } from "./test/package-aliases.js";
import { SYSTEM_TESTS } from "./test/system-tests.js";

export default defineConfig({
  resolve: { alias: packageAliases() },
  test: {
    include: SYSTEM_TESTS,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});
