// Shared by the Codex, Copilot and Gemini adapter tests: the verdicts every renderer is
// asked to express, and a reader of a host's recorded payloads (test/hooks/fixtures/<host>).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Verdict } from "../../src/hooks/index.js";

export const NOW = "2026-12-05T10:12:44.512Z";

export const deny: Verdict = {
  decision: "deny",
  category: "tool_execution",
  severity: "critical",
  source: "policy",
  reasons: ["no"],
};
export const ask: Verdict = { ...deny, decision: "ask", severity: "warning" };
export const allow: Verdict = {
  decision: "allow",
  category: "tool_execution",
  severity: "info",
  source: "policy",
};
/** Allowed contained: the shell command the host runs instead (containment's updated_input). */
export const contained: Verdict = {
  ...allow,
  directives: { updated_input: { command: "contained npm test" } },
};
export const inject: Verdict = {
  ...allow,
  directives: { inject_context: { position: "system", content: "ctx" } },
};

/** One recorded payload of a host, parsed. */
export const fixtureOf =
  (host: string) =>
  (name: string): Record<string, unknown> =>
    JSON.parse(readFileSync(join(import.meta.dirname, "fixtures", host, `${name}.json`), "utf8")) as Record<
      string,
      unknown
    >;

/** The JSON a host answer printed. */
export const json = (s: string | undefined) => JSON.parse(s ?? "") as Record<string, unknown>;
