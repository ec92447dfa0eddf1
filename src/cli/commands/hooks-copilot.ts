// `warden hooks copilot [--event E] [--cloud-agent]` (one GitHub Copilot hook event on stdin →
// Copilot's answer) and `warden hooks install copilot [--project|--user] --accept-fail-open`
// (writes .github/hooks/warden.json — read by Copilot CLI and the Copilot coding agent — or
// ~/.copilot/hooks/warden.json, $COPILOT_HOME/hooks when set). Copilot's camelCase payload
// does not name its event, so each entry passes `--event`. Copilot denies a preToolUse whose
// command hook crashes, but runs the call when it times out, so the install needs
// --accept-fail-open.
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import { CliError } from "../../contracts/index.js";
import {
  COPILOT_EVENTS,
  type CopilotOptions,
  copilotAdapterFor,
  copilotEventName,
  type HostAdapter,
  isCopilotEvent,
} from "../../hooks/index.js";
import type { CliContext } from "../io.js";
import { addOptions, type OptionSpec, type OptionsOf } from "../options.js";
import { hookEntryCommand } from "./hook-command.js";
import {
  type HostInstallOptions,
  type JsonObject,
  mergeEvents,
  readSettings,
  requireFailOpenAck,
  writeInstalled,
} from "./hooks-host-install.js";

/** Seconds Copilot waits for a hook (a timed-out preToolUse runs the call). */
const TIMEOUT_SECONDS = 60;

const COPILOT_OPTIONS = {
  event: {
    flags: "--event <name>",
    description: "the Copilot event this hook entry is configured for (camelCase payloads do not name it)",
    kind: "value",
  },
  cloudAgent: {
    flags: "--cloud-agent",
    description: "answer as for the Copilot coding agent (default: when $COPILOT_AGENT_PROMPT is set)",
    kind: "flag",
  },
} as const satisfies Record<string, OptionSpec>;

/** The adapter for one invocation: the configured event, and whether this is the cloud agent. */
export function copilotInvocation(o: {
  event?: string | undefined;
  cloudAgent?: boolean | undefined;
}): HostAdapter {
  const options: CopilotOptions = {
    ...(o.event !== undefined ? { event: o.event } : {}),
    cloudAgent: o.cloudAgent === true || process.env.COPILOT_AGENT_PROMPT !== undefined,
  };
  return copilotAdapterFor(options);
}

export function registerCopilot<S extends Record<string, OptionSpec>>(
  hooks: Command,
  options: S,
  run: (o: OptionsOf<S>, adapter: HostAdapter) => Promise<void>,
): void {
  addOptions(hooks.command("copilot").description("answer one GitHub Copilot hook event read from stdin"), {
    ...options,
    ...COPILOT_OPTIONS,
  }).action((o: OptionsOf<S> & OptionsOf<typeof COPILOT_OPTIONS>) => {
    if (o.event !== undefined && !isCopilotEvent(copilotEventName(undefined, o.event)))
      throw new CliError(
        "ERR_CLI_USAGE",
        `--event ${o.event} is not a Copilot event (${COPILOT_EVENTS.join(", ")})`,
      );
    return run(o, copilotInvocation(o));
  });
}

export function copilotHooksPath(o: HostInstallOptions): string {
  if (!o.user) return resolve(".github", "hooks", "warden.json");
  return join(process.env.COPILOT_HOME || join(homedir(), ".copilot"), "hooks", "warden.json");
}

/** Adds one entry per Copilot event, each naming its event; a file of another version is refused. */
export function mergeCopilotHooks(path: string, file: JsonObject, command: string) {
  if (file.version !== undefined && file.version !== 1)
    throw new CliError("ERR_CLI_INPUT", `${path}: version ${String(file.version)} is not 1; not changed`);
  const line = (event: string) => `${command} --event ${event}`;
  const entry = (event: string) => ({ type: "command", bash: line(event), timeoutSec: TIMEOUT_SECONDS });
  const merged = mergeEvents(path, file, COPILOT_EVENTS, entry, line);
  const out: JsonObject = { version: 1, ...merged.file };
  return { ...merged, file: out };
}

export function installCopilot(ctx: CliContext, o: HostInstallOptions): void {
  requireFailOpenAck("GitHub Copilot", "times out", o);
  const path = copilotHooksPath(o);
  const merged = mergeCopilotHooks(path, readSettings(path), o.command ?? hookEntryCommand("copilot"));
  writeInstalled(ctx, path, merged, [
    "warning: Copilot runs the tool call when a hook times out (accepted with --accept-fail-open).",
    "note: the Copilot coding agent reads .github/hooks/*.json from the default branch and runs it in its own",
    "      sandbox, where these absolute paths do not exist: install Warden there and pass --command.",
  ]);
}
