// What every host adapter shares (Claude Code, Cursor, …): a host starts a process per hook,
// hands it one JSON object on stdin and reads the answer from stdout and the exit code.
// An adapter translates the host's input into an AARTS event and renders the verdict in the
// host's documented output format; `answerHostEvent` runs the one flow between them —
// handshake in process, translate, engine.handle (which never throws), render. Input that
// is not a JSON object is handed to the engine as is, which refuses it (fail closed).
import type { Engine } from "./engine.js";
import { AARTS_VERSION, type Verdict } from "./schema-base.js";

/** The host process's answer: its exit code and what goes to stdout / stderr. */
export interface HostAnswer {
  exitCode: 0 | 2;
  stdout?: string;
  stderr?: string;
}

export type HostInput = Record<string, unknown>;

export interface HostAdapter {
  /** The AARTS host_id of every event it translates. */
  readonly hostId: string;
  /** The host's event name of one input ("unknown" when it has none). */
  eventName(input: unknown): string;
  /** An environment variable the host sets to the workspace root (preferred over the input). */
  readonly workspaceEnv?: string;
  /** The workspace root the input names, if any (writes outside it are denied). */
  workspaceOf(input: HostInput): string | undefined;
  /** The AARTS event for one host input (fields it lacks are left for the parser to refuse). */
  translate(input: HostInput, now: string): Record<string, unknown>;
  /** The host's answer to a verdict, by the host event it answers. */
  render(event: string, verdict: Verdict): HostAnswer;
}

export const str = (v: unknown, fallback = ""): string => (typeof v === "string" ? v : fallback);

export const isObject = (v: unknown): v is HostInput =>
  typeof v === "object" && v !== null && !Array.isArray(v);

export const obj = (v: unknown): HostInput => (isObject(v) ? v : {});

/** One JSON line for stdout. */
export const jsonLine = (o: unknown): string => `${JSON.stringify(o)}\n`;

/** The human-readable reason of a verdict, prefixed "Warden:" and bounded. */
export function verdictReason(v: Verdict): string {
  const why = (v.reasons ?? []).join("; ") || `${v.decision} (${v.category})`;
  return `Warden: ${why}`.slice(0, 4000);
}

/** True when the verdict came from the failure policy (the engine could not evaluate). */
export const isFailure = (v: Verdict): boolean => "error_code" in v;

/** What a host tells the model when a tool result's credentials were masked. */
export const CREDENTIAL_NOTICE =
  "Warden: the tool result contained credentials. Do not repeat, store or send them anywhere.";

/** `hookSpecificOutput.additionalContext` for `event` (Claude Code's shape, which Codex and Gemini CLI share). */
export function contextAnswer(event: string, text: string): HostAnswer {
  return {
    exitCode: 0,
    stdout: jsonLine({ hookSpecificOutput: { hookEventName: event, additionalContext: text } }),
  };
}

/** A SessionStart answer: the verdict's inject_context as additional context, else `none`. */
export function sessionStartAnswer(v: Verdict, none: HostAnswer): HostAnswer {
  const inject = v.directives?.inject_context?.content;
  return inject === undefined ? none : contextAnswer("SessionStart", inject);
}

/** An adapter-level fallback event name for a host event the adapter does not handle. */
export function unknownHookPoint(host: string, name: string): string {
  return `${host}:${name.slice(0, 64) || "unknown"}`;
}

/** The one flow of a host hook process: handshake, translate, evaluate, render. */
export async function answerHostEvent(
  engine: Engine,
  adapter: HostAdapter,
  input: unknown,
  now: string,
): Promise<HostAnswer> {
  // The handshake runs in process, on the adapter's own constant version: journaled only
  // if incompatible (which makes the engine refuse the event, and journal that too).
  await engine.versionCheck({ aarts_version: AARTS_VERSION }, { selfCheck: true });
  const event = isObject(input) ? adapter.translate(input, now) : input;
  const verdict = await engine.handle(event);
  return adapter.render(adapter.eventName(input), verdict);
}
