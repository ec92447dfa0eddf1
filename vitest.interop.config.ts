// `npm run test:interop`: the tests against upstream material in test/interop, reading
// the vectors directory from WARDEN_VECTORS (see test/interop/vectors.ts).
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/interop/**/*.test.ts"],
    globalSetup: ["test/interop/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});
