// Ari Kernel's capability check, run before any rule when the principal's capabilities
// are configured: no grant for the tool class and action, or a grant whose constraints
// the parameters violate, is a built-in deny no rule can override. The checks here are
// lexical (no filesystem or DNS); executors canonicalise paths and hosts again.
import { posix } from "node:path";
import { type EvalContext, paramValue } from "./eval-context.js";
import type { Capability, RuleOutcome } from "./types.js";

export const NO_CAPABILITY: RuleOutcome = {
  rule: { id: "builtin.capability", source: "builtin", decision: "deny", reason: "No capability grant" },
  reasonCode: "NO_CAPABILITY",
};

function violation(detail: string): RuleOutcome {
  return {
    rule: {
      id: "builtin.capability-constraint",
      source: "builtin",
      decision: "deny",
      reason: `Constraint violation: ${detail}`,
    },
    reasonCode: "CAPABILITY_CONSTRAINT",
  };
}

/** undefined when a grant allows the call; otherwise the built-in deny outcome. */
export function checkCapabilities(ctx: EvalContext, caps: readonly Capability[]): RuleOutcome | undefined {
  const grants = caps.filter(
    (c) =>
      c.toolClass === ctx.toolClass &&
      (c.actions === undefined || c.actions.length === 0 || c.actions.includes(ctx.action)),
  );
  if (grants.length === 0) return NO_CAPABILITY;
  let firstProblem: string | undefined;
  for (const g of grants) {
    const problem = constraintProblem(ctx, g);
    if (problem === undefined) return undefined;
    firstProblem ??= problem;
  }
  return violation(firstProblem ?? "constraints not satisfied");
}

function constraintProblem(ctx: EvalContext, cap: Capability): string | undefined {
  const k = cap.constraints;
  if (k === undefined) return undefined;
  if (k.allowedPaths !== undefined) {
    const p = paramValue(ctx.params, "path");
    if (typeof p !== "string" || !pathAllowed(p, k.allowedPaths)) return "path not in allowedPaths";
  }
  if (k.allowedHosts !== undefined) {
    const host = hostOf(ctx.params);
    if (host === undefined || !k.allowedHosts.some((h) => h.toLowerCase() === host)) {
      return "host not in allowedHosts";
    }
  }
  if (k.allowedCommands !== undefined) {
    const cmd = paramValue(ctx.params, "command");
    const name = typeof cmd === "string" ? cmd.trim().split(/\s+/)[0] : undefined;
    if (name === undefined || !k.allowedCommands.includes(name)) return "command not in allowedCommands";
  }
  if (k.allowedDatabases !== undefined) {
    const db = paramValue(ctx.params, "database");
    if (typeof db !== "string" || !k.allowedDatabases.includes(db)) return "database not in allowedDatabases";
  }
  return undefined;
}

function hostOf(params: Record<string, unknown>): string | undefined {
  const url = paramValue(params, "url");
  if (typeof url === "string") {
    try {
      const u = new URL(url);
      return u.username !== "" || u.password !== "" ? undefined : u.hostname.toLowerCase();
    } catch {
      return undefined;
    }
  }
  const host = paramValue(params, "host");
  return typeof host === "string" ? host.toLowerCase() : undefined;
}

/** Exact paths or `dir/**` prefixes, compared after lexical normalisation; `..` escapes never match. */
export function pathAllowed(path: string, allowed: readonly string[]): boolean {
  if (path.includes("\0") || path === "") return false;
  const norm = posix.normalize(path);
  if (norm === ".." || norm.startsWith("../") || norm.split("/").includes("..")) return false;
  for (const a of allowed) {
    if (a.endsWith("/**")) {
      const dir = posix.normalize(a.slice(0, -3)).replace(/\/+$/, "");
      if (norm === dir || norm.startsWith(`${dir}/`)) return true;
    } else if (posix.normalize(a) === norm) {
      return true;
    }
  }
  return false;
}
