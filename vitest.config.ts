// `npm test`: the project's own tests; they need nothing outside the clone.
// The interop tests (test/interop) run with `npm run test:interop`.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/interop/**", "**/node_modules/**"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});
