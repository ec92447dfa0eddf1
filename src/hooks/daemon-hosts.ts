// The hosts the hook daemon answers, each through its existing adapter (the same translation
// and rendering as the one-shot `warden hooks <host>`). A host plugs in with one line in
// DAEMON_HOSTS; `http` says how its answer travels over an HTTP hook, where a process exit
// code does not exist:
//   Claude Code (type "http" hooks): a 2xx with an empty body is "no output", a 2xx with a
//     JSON object is read like a command hook's stdout. There is no exit code 2, so an
//     answer that would exit 2 becomes the JSON that blocks: a PreToolUse deny, else
//     {"decision":"block","reason"} (docs/hooks-daemon.md "What Claude Code does").
//   any other host: the adapter's stdout with 200 on exit 0, 403 with the reason on exit 2.
import { claudeCodeAdapter } from "./claude-code.js";
import { codexAdapter } from "./codex.js";
import { copilotAdapterFor, copilotEventName, isCopilotEvent } from "./copilot.js";
import { cursorAdapter } from "./cursor.js";
import { geminiAdapter } from "./gemini.js";
import type { HostAdapter, HostAnswer } from "./host-adapter-common.js";

export interface HttpReply {
  status: number;
  body: string;
}

export interface DaemonHost {
  readonly adapter: HostAdapter;
  /** The HTTP rendering of an answer to one event (by the host's event name). */
  http(answer: HostAnswer, event: string): HttpReply;
}

const reasonOf = (a: HostAnswer): string =>
  (a.stderr ?? "").trim().slice(0, 4000) || "Warden: refused (fail-closed)";

/** A host without its own HTTP contract: 200 + stdout, or 403 + the reason on a blocking answer. */
export function genericHttp(answer: HostAnswer): HttpReply {
  if (answer.exitCode === 0) return { status: 200, body: (answer.stdout ?? "").trim() };
  const body = answer.stdout?.trim() || JSON.stringify({ error: { message: reasonOf(answer) } });
  return { status: 403, body };
}

/** Claude Code's http hook: always a 2xx; a blocking answer is carried in Claude Code's JSON. */
export function claudeCodeHttp(answer: HostAnswer, event: string): HttpReply {
  if (answer.exitCode === 0) return { status: 200, body: (answer.stdout ?? "").trim() };
  const reason = reasonOf(answer);
  const body =
    event === "PreToolUse"
      ? {
          hookSpecificOutput: {
            hookEventName: "PreToolUse",
            permissionDecision: "deny",
            permissionDecisionReason: reason,
          },
        }
      : { decision: "block", reason };
  return { status: 200, body: JSON.stringify(body) };
}

export const DAEMON_HOSTS: Readonly<Record<string, DaemonHost>> = {
  "claude-code": { adapter: claudeCodeAdapter, http: claudeCodeHttp },
  cursor: { adapter: cursorAdapter, http: (a) => genericHttp(a) },
  codex: { adapter: codexAdapter, http: (a) => genericHttp(a) },
  gemini: { adapter: geminiAdapter, http: (a) => genericHttp(a) },
};

/** What the entry's command line adds for a host whose payload does not name its event. */
export interface HostOptions {
  event?: string;
  cloudAgent?: boolean;
}

/**
 * GitHub Copilot: one adapter per configured event (its camelCase payloads carry no event
 * name; the install writes `--event E` per entry), the coding agent's answers when asked.
 */
function copilotHost(o: HostOptions): DaemonHost | undefined {
  if (o.event !== undefined && !isCopilotEvent(copilotEventName(undefined, o.event))) return undefined;
  const adapter = copilotAdapterFor({
    ...(o.event !== undefined ? { event: o.event } : {}),
    cloudAgent: o.cloudAgent === true,
  });
  return { adapter, http: (a) => genericHttp(a) };
}

export function daemonHost(name: string, o: HostOptions = {}): DaemonHost | undefined {
  if (name === "copilot") return copilotHost(o);
  if (o.event !== undefined) return undefined;
  return Object.hasOwn(DAEMON_HOSTS, name) ? DAEMON_HOSTS[name] : undefined;
}
