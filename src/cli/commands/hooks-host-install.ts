// What the Codex, Copilot and Gemini CLI install commands share: read a host's JSON settings
// file (refused unchanged when it is not what the host writes), add Warden's entry per event
// next to the others (a second run adds nothing), write it back, and the fail-open
// acknowledgement — a host that runs the tool when its hook times out or crashes is only
// installed with `--accept-fail-open`, and the install output says so.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { CliError, parseStrictJson } from "../../contracts/index.js";
import type { CliContext } from "../io.js";

export type JsonObject = Record<string, unknown>;

/** The install flags every host's install reads. */
export interface HostInstallOptions {
  project?: boolean | undefined;
  user?: boolean | undefined;
  command?: string | undefined;
  acceptFailOpen?: boolean | undefined;
}

/** A host settings file as an object with an object `hooks`; anything else is refused unchanged. */
export function readSettings(path: string): JsonObject {
  if (!existsSync(path)) return {};
  let parsed: unknown;
  try {
    parsed = parseStrictJson(readFileSync(path, "utf8"));
  } catch (err) {
    const why = err instanceof Error ? err.message.slice(0, 300) : "unreadable";
    throw new CliError("ERR_CLI_INPUT", `${path} is not plain JSON (${why}); not changed`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new CliError("ERR_CLI_INPUT", `${path} is not a JSON object; not changed`);
  }
  const file = parsed as JsonObject;
  if (
    file.hooks !== undefined &&
    (typeof file.hooks !== "object" || file.hooks === null || Array.isArray(file.hooks))
  ) {
    throw new CliError("ERR_CLI_INPUT", `${path}: "hooks" is not an object; not changed`);
  }
  return file;
}

/** One event's list of entries; a list that is not an array is refused unchanged. */
export function eventList(path: string, hooks: JsonObject, event: string): unknown[] {
  const list = hooks[event];
  if (list === undefined) return [];
  if (!Array.isArray(list))
    throw new CliError("ERR_CLI_INPUT", `${path}: hooks.${event} is not a list; not changed`);
  return [...list];
}

/**
 * Adds `entry(event)` to each event's list unless the list already holds `marker(event)`
 * (the command Warden registered there); other entries and fields are kept.
 */
export function mergeEvents(
  path: string,
  file: JsonObject,
  events: readonly string[],
  entry: (event: string) => unknown,
  marker: (event: string) => string,
): { file: JsonObject; added: string[] } {
  const hooks: JsonObject = { ...((file.hooks as JsonObject | undefined) ?? {}) };
  const added: string[] = [];
  for (const event of events) {
    const list = eventList(path, hooks, event);
    if (JSON.stringify(list).includes(JSON.stringify(marker(event)))) continue;
    list.push(entry(event));
    hooks[event] = list;
    added.push(event);
  }
  return { file: { ...file, hooks }, added };
}

/** Refuses a host that fails open unless the user acknowledged it; says what is not covered. */
export function requireFailOpenAck(host: string, gaps: string, o: HostInstallOptions): void {
  if (o.acceptFailOpen) return;
  throw new CliError(
    "ERR_CLI_HOST_FAILS_OPEN",
    `${host} runs the tool call anyway when its hook ${gaps} (fail open), so Warden cannot guarantee a block there. ` +
      "Nothing was written. Re-run with --accept-fail-open to install it knowing this (docs/hooks.md, the host table).",
  );
}

/** Writes the merged file and reports what was added, with the fail-open warning and next steps. */
export function writeInstalled(
  ctx: CliContext,
  path: string,
  merged: { file: JsonObject; added: string[] },
  notes: readonly string[],
): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(merged.file, null, 2)}\n`);
  const head =
    merged.added.length > 0
      ? `${path}: added Warden for ${merged.added.join(", ")}\n`
      : `${path}: already installed\n`;
  ctx.io.out(head + notes.map((n) => `  ${n}\n`).join(""));
}
