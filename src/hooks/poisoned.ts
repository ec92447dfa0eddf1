// What a poisoned session may still do (docs/hooks-sessions.md "A poisoned session").
// A session is poisoned when a result from an untrusted source carried instruction phrasing
// or any result carried a credential (taint-trust.ts). Shell commands run contained (the
// workspace writable, credentials masked, the network only through the sandbox's allowlist
// proxy), so a poisoned session keeps working: tests, builds, local servers, edits. What it
// loses is the tools that send data out around the sandbox: web requests to destinations
// off the allowlist, MCP tools, sub-agents, databases. Writes outside the workspace and the
// scratch directory ask.
import { realpathSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import type { TaintLabel } from "../contracts/index.js";
import { type CodingProfile, codingProfile, egressAllowed, isWithin } from "./coding-profile.js";
import type { EvalContext } from "./context.js";
import type { CanonicalTool, Verdict } from "./schema-base.js";
import { type GateShape, placePath, realPlace } from "./taxonomy.js";
import { fromSignal } from "./verdicts.js";

type Answer = "allow" | "deny" | "allowlisted" | "workspace-or-scratch";

/** The table: each canonical tool's answer in a poisoned session, and why. */
export const POISONED_SESSION: Readonly<Record<CanonicalTool, { answer: Answer; reason: string }>> = {
  shell: { answer: "allow", reason: "runs contained: network only through the allowlist proxy" },
  package_install: { answer: "allow", reason: "runs contained: registries on the allowlist only" },
  code_exec: { answer: "allow", reason: "runs contained like the shell" },
  file_read: { answer: "allow", reason: "credential locations stay refused by the file rules" },
  file_write: { answer: "workspace-or-scratch", reason: "writes outside the workspace and scratch ask" },
  file_edit: { answer: "workspace-or-scratch", reason: "edits outside the workspace and scratch ask" },
  file_delete: { answer: "workspace-or-scratch", reason: "deletes outside the workspace and scratch ask" },
  web_request: {
    answer: "allowlisted",
    reason: "a web request is direct egress around the sandbox: allowlisted hosts only",
  },
  browser: {
    answer: "allowlisted",
    reason: "a browser is direct egress around the sandbox: allowlisted hosts only",
  },
  mcp_call: {
    answer: "deny",
    reason: "an MCP server receives the call's arguments and can send them anywhere",
  },
  delegate: {
    answer: "deny",
    reason: "a sub-agent with web and MCP tools would carry the instructions into calls of its own",
  },
  database: { answer: "deny", reason: "a database connection can carry data to a remote server" },
  other: { answer: "allow", reason: "host tools: the preset allows only harmless ones" },
};

const READ_METHODS: ReadonlySet<string> = new Set(["get", "head", "options"]);

/**
 * The session's taint as the Gate sees it on one call. Only outbound HTTP writes carry it:
 * the preset's `host-ask-egress-with-untrusted-context` and the Gate's behavioural rules
 * judge them by it. Shell calls run contained and file calls inside the workspace stay
 * there, so a clean web read no longer arms the Gate's sequence rules against `npm test`.
 */
export function gateTaint(taint: readonly TaintLabel[], shape: GateShape): TaintLabel[] {
  return shape.toolClass === "http" && !READ_METHODS.has(shape.action) ? [...taint] : [];
}

function profileOf(ctx: EvalContext): CodingProfile {
  return (
    ctx.profile ??
    codingProfile(
      { home: homedir(), workspace: ctx.workspace, stateDirs: ctx.stateDirs ?? [] },
      ctx.profileConfig ?? {},
    )
  );
}

function hostOf(input: Record<string, unknown>): string | undefined {
  const url = input.url;
  if (typeof url !== "string") return undefined;
  try {
    const u = new URL(url);
    return u.protocol === "https:" || u.protocol === "http:" ? u.hostname : undefined;
  } catch {
    return undefined;
  }
}

let scratchRoot: string | undefined;
function scratch(): string {
  if (scratchRoot === undefined) {
    try {
      scratchRoot = realpathSync(tmpdir());
    } catch {
      scratchRoot = tmpdir();
    }
  }
  return scratchRoot;
}

function inWorkspaceOrScratch(input: Record<string, unknown>, workspace: string | undefined): boolean {
  const raw = ["file_path", "path", "notebook_path", "filename"]
    .map((k) => input[k])
    .find((v) => typeof v === "string");
  if (typeof raw !== "string" || raw === "~" || raw.startsWith("~/")) return false;
  const placed = placePath(raw, workspace);
  return placed.inWorkspace || isWithin(realPlace(placed.path), scratch());
}

function permitted(ctx: EvalContext, tool: CanonicalTool, input: Record<string, unknown>): Answer | true {
  const { answer } = POISONED_SESSION[tool];
  switch (answer) {
    case "allow":
      return true;
    case "deny":
      return answer;
    case "allowlisted": {
      const host = hostOf(input);
      return host !== undefined && egressAllowed(profileOf(ctx), host) ? true : answer;
    }
    case "workspace-or-scratch":
      return inWorkspaceOrScratch(input, ctx.workspace) ? true : answer;
  }
}

/** The engine's signal on a call in a poisoned session, if the table restricts it. */
export function poisonedSignal(
  ctx: EvalContext,
  tool: CanonicalTool,
  input: Record<string, unknown>,
  artifacts: string[],
): Verdict | undefined {
  const poisoned = ctx.session.poisoned;
  if (poisoned.length === 0) return undefined;
  const p = permitted(ctx, tool, input);
  if (p === true) return undefined;
  const out =
    p === "workspace-or-scratch" ? "writes outside the workspace" : "may send data out around the sandbox";
  const why = `${poisoned.slice(-2).join("; ")}): ${tool} ${out} — ${POISONED_SESSION[tool].reason}`;
  const clear = "a human can review and clear it with `warden hooks status` / `warden hooks clear`";
  return fromSignal({
    decision: p === "workspace-or-scratch" ? "ask" : "deny",
    category: "data_exfiltration",
    source: "behavioral_analysis",
    rule: p === "workspace-or-scratch" ? "aarts-poisoned-write-outside" : "aarts-poisoned-direct-egress",
    reason: `this session is poisoned (${why}; ${clear}`.slice(0, 1000),
    artifacts,
  });
}
