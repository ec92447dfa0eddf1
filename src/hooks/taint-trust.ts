// Trust levels of tool-result sources (docs/hooks-sessions.md "Trust levels"). A result
// from a trusted source — the user's own workspace files, commands run in the workspace,
// the host's bookkeeping — is scanned and its findings journaled, but instruction phrasing
// in it does not poison the session (Warden's own README quotes "ignore previous
// instructions"). A result from an untrusted source — the web, MCP servers, files outside
// the workspace or in its dependency directories, network commands, skills, unknown tools —
// taints the session, and instruction phrasing in it poisons it. Anything not recognised
// is untrusted.
import type { TaintLabel } from "../contracts/index.js";
import type { CanonicalTool } from "./schema-base.js";
import type { SessionState } from "./state.js";
import { fileSource, holdsUntrusted, shellSource } from "./taint-places.js";

type TaintSource = TaintLabel["source"];

export interface TrustEntry {
  trust: "trusted" | "untrusted";
  /** The taint label an untrusted result adds to the session. */
  taint?: TaintSource;
  reason: string;
}

/** The table of result sources: the one place a source's trust is decided. */
export const TRUST_LEVELS = {
  "workspace-file": {
    trust: "trusted",
    reason: "a file of the user's workspace, read by a file tool",
  },
  "workspace-shell": {
    trust: "trusted",
    reason: "output of a command run in the workspace, with no network program, URL or outside path",
  },
  "host-internal": {
    trust: "trusted",
    reason: "the host's bookkeeping (todos, plan mode, the user's answers, an edit's confirmation)",
  },
  "sub-agent-clean": {
    trust: "trusted",
    reason:
      "a sub-agent whose own tool calls this engine saw (its session) and found no untrusted content in",
  },
  "changed-workspace-file": {
    trust: "untrusted",
    taint: "tool-output",
    reason: "a workspace file changed after untrusted content entered the session: it may carry that content",
  },
  "dependency-file": {
    trust: "untrusted",
    taint: "retrieved-doc",
    reason:
      "a file in a dependency directory of the workspace (node_modules, vendor, .venv, …): third-party text",
  },
  "outside-file": {
    trust: "untrusted",
    taint: "retrieved-doc",
    reason: "a file outside the workspace",
  },
  "network-shell": {
    trust: "untrusted",
    taint: "web",
    reason: "output of a command that can fetch from the network (curl, git clone, an install, a URL)",
  },
  "outside-shell": {
    trust: "untrusted",
    taint: "tool-output",
    reason: "output of a command that names paths outside the workspace",
  },
  "background-shell": {
    trust: "untrusted",
    taint: "tool-output",
    reason: "output of a background shell, whose command the result does not name",
  },
  web: { trust: "untrusted", taint: "web", reason: "a web page or search result" },
  mcp: { trust: "untrusted", taint: "mcp", reason: "an MCP server's tool result, resource or tool list" },
  skill: {
    trust: "untrusted",
    taint: "retrieved-doc",
    reason:
      "skill or slash-command text, which plugins and marketplaces install too; the host does not say whose",
  },
  "sub-agent": {
    trust: "untrusted",
    taint: "tool-output",
    reason:
      "a sub-agent's result whose reads are unknown (Claude Code skips hooks inside sub-agents in some versions)",
  },
  database: { trust: "untrusted", taint: "tool-output", reason: "rows of a database" },
  unknown: { trust: "untrusted", taint: "tool-output", reason: "a tool Warden does not know" },
} as const satisfies Record<string, TrustEntry>;

export type ResultSource = keyof typeof TRUST_LEVELS;

/** Host tools of kind `other` by their result's source (lower-case native names). */
const HOST_TOOL_SOURCES: Readonly<Record<string, ResultSource>> = {
  todowrite: "host-internal",
  todoread: "host-internal",
  exitplanmode: "host-internal",
  enterplanmode: "host-internal",
  askuserquestion: "host-internal",
  killshell: "host-internal",
  killbash: "host-internal",
  taskstop: "host-internal",
  taskcreate: "host-internal",
  taskget: "host-internal",
  tasklist: "host-internal",
  taskupdate: "host-internal",
  lsp: "workspace-file",
  bashoutput: "background-shell",
  taskoutput: "background-shell",
  listmcpresourcestool: "mcp",
  readmcpresourcetool: "mcp",
  toolsearch: "mcp",
  skill: "skill",
  slashcommand: "skill",
};

export { holdsUntrusted };

/**
 * A sub-agent's result: trusted only when the engine saw the sub-agent's own tool calls
 * (its session, by its id) and neither it nor the parent holds untrusted content. A host
 * may run a sub-agent's tools without firing hooks, so an unseen sub-agent is untrusted.
 */
export function subAgentSource(parent: SessionState, own: SessionState | undefined): ResultSource {
  return own !== undefined && !holdsUntrusted(own) && !holdsUntrusted(parent)
    ? "sub-agent-clean"
    : "sub-agent";
}

/** The source of one tool result, by the tool, its input and the session so far. */
export function resultSource(
  tool: CanonicalTool,
  native: string,
  input: Record<string, unknown>,
  workspace: string | undefined,
  session: SessionState,
  /** The result itself: a Grep or Glob result's file names are judged one by one. */
  result?: unknown,
): ResultSource {
  switch (tool) {
    case "file_read":
      return fileSource(input, workspace, session, result);
    case "file_write":
    case "file_edit":
    case "file_delete":
      return "host-internal";
    case "shell":
    case "package_install":
    case "code_exec":
      return shellSource(input, workspace, session);
    case "web_request":
    case "browser":
      return "web";
    case "mcp_call":
      return "mcp";
    case "delegate":
      // The Task / Agent result names no sub-agent id: its reads are unknown.
      return subAgentSource(session, undefined);
    case "database":
      return "database";
    case "other":
      return HOST_TOOL_SOURCES[native.toLowerCase()] ?? "unknown";
  }
}

/** The trust entry of a source. */
export function trustOf(source: ResultSource): TrustEntry {
  return TRUST_LEVELS[source];
}
