// `warden hooks gemini` (one Gemini CLI hook event on stdin → Gemini CLI's answer) and
// `warden hooks install gemini [--project|--user] --accept-fail-open` (merges into
// .gemini/settings.json or ~/.gemini/settings.json). The event flow is the shared one
// (hooks.ts hostHook); this file adds Gemini CLI's registration. Gemini CLI lets the call
// run when its hook exits 1, times out or prints text that is not JSON, so the install needs
// --accept-fail-open.
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import { GEMINI_EVENTS } from "../../hooks/index.js";
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

/** Milliseconds Gemini CLI waits for a hook (its default) before going on without it. */
const TIMEOUT_MS = 60_000;
const TOOL_EVENTS: ReadonlySet<string> = new Set(["BeforeTool", "AfterTool"]);

export function registerGemini<S extends Record<string, OptionSpec>>(
  hooks: Command,
  options: S,
  run: (o: OptionsOf<S>) => Promise<void>,
): void {
  addOptions(
    hooks.command("gemini").description("answer one Gemini CLI hook event read from stdin"),
    options,
  ).action((o: OptionsOf<S>) => run(o));
}

export function geminiSettingsPath(o: HostInstallOptions): string {
  return o.user ? join(homedir(), ".gemini", "settings.json") : resolve(".gemini", "settings.json");
}

/** Adds Warden's command hook to every Gemini event it handles ("*": every tool). */
export function mergeGeminiSettings(path: string, file: JsonObject, command: string) {
  const entry = (event: string) => {
    const hook = { name: "warden", type: "command", command, timeout: TIMEOUT_MS };
    return TOOL_EVENTS.has(event) ? { matcher: "*", hooks: [hook] } : { hooks: [hook] };
  };
  return mergeEvents(path, file, GEMINI_EVENTS, entry, () => command);
}

export function installGemini(ctx: CliContext, o: HostInstallOptions): void {
  requireFailOpenAck("Gemini CLI", "exits 1, times out or prints text that is not JSON", o);
  const path = geminiSettingsPath(o);
  const current = readSettings(path);
  const merged = mergeGeminiSettings(path, current, o.command ?? hookEntryCommand("gemini"));
  const off = (current.hooksConfig as JsonObject | undefined)?.enabled === false;
  writeInstalled(ctx, path, merged, [
    "warning: Gemini CLI fails open on a hook exit 1, timeout or non-JSON answer (accepted with --accept-fail-open).",
    ...(off
      ? ["warning: hooksConfig.enabled is false in this file: Gemini CLI runs no hooks until it is true."]
      : []),
    "next: start gemini; it asks you to trust a changed project hook before running it (/hooks panel lists it).",
  ]);
}
