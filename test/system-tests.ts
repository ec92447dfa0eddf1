// The tests that need operating-system packages beyond Node: bubblewrap (the namespace
// sandbox tier, the coding-agent containment, and the conformance runs whose example
// deployment uses them) and python3 (the Python client, the sandbox's resource-limit
// programs). `npm run test:system` runs them (vitest.system.config.ts); `npm test` leaves
// them out, so `npm install && npm test` needs Node and nothing else. `.ci/run` installs
// the packages and runs both. Each of these fails, never skips, when what it needs is missing.
export const SYSTEM_TESTS: string[] = [
  // bubblewrap
  "test/executors/sandbox-namespace.test.ts",
  "test/server/sandbox-config.test.ts",
  "test/hooks/contain-attacks.test.ts",
  "test/hooks/contain-benign.test.ts",
  "test/hooks/contain-cli.test.ts",
  "test/hooks/contain-profile.test.ts",
  "test/hooks/sweep-dotenv.test.ts",
  "test/hooks/sweep-git-escape.test.ts",
  "test/hooks/sweep-write-race.test.ts",
  "test/hooks/contain-session-net.test.ts",
  "test/hooks/shell-dotenv-create.test.ts",
  "test/hooks/sweep-nested-protect.test.ts",
  "test/hooks/egress-ask.test.ts",
  "test/hooks/daemon-copilot.test.ts",
  // hosts end to end: an allowed shell call is answered "allow, contained", which needs bwrap
  "test/hooks/claude-code-e2e.test.ts",
  "test/hooks/copilot-e2e.test.ts",
  "test/hooks/gemini-e2e.test.ts",
  "test/hooks/daemon-entry.test.ts",
  "test/hooks/codex-e2e.test.ts",
  "test/hooks/cursor-e2e.test.ts",
  "test/hooks/daemon-http.test.ts",
  "test/hooks/engine.test.ts",
  "test/hooks/lockout.test.ts",
  "test/hooks/state-bound.test.ts",
  "test/hooks/ask-memory.test.ts",
  "test/hooks/conformance.test.ts",
  "test/hooks/engine-hooks.test.ts",
  "test/hooks/host-enforcement.test.ts",
  "test/hooks/shell-engine.test.ts",
  "test/conformance/cli.test.ts",
  "test/conformance/url.test.ts",
  "test/conformance/extended.test.ts",
  "test/conformance/full.test.ts",
  // python3
  "test/executors/sandbox-limits.test.ts",
  "test/clients/python-client.test.ts",
];
