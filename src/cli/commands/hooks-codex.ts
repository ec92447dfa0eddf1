// `warden hooks codex` (one OpenAI Codex CLI hook event on stdin → Codex's answer) and
// `warden hooks install codex [--project|--user] --accept-fail-open` (writes .codex/hooks.json
// or ~/.codex/hooks.json — $CODEX_HOME/hooks.json when set). The event flow is the shared
// one (hooks.ts hostHook); this file adds Codex's registration. Codex runs a tool call whose
// hook timed out, crashed (exit other than 0/2) or printed an answer it cannot parse, so the
// install needs --accept-fail-open.
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import type { CliContext } from "../io.js";
import { addOptions, type OptionSpec, type OptionsOf } from "../options.js";
import { hookEntryCommand } from "./hook-command.js";
import {
  type HostInstallOptions,
  mergeEvents,
  readSettings,
  requireFailOpenAck,
  writeInstalled,
} from "./hooks-host-install.js";

/** The Codex events Warden registers for (PermissionRequest is covered by PreToolUse). */
export const CODEX_INSTALL_EVENTS = [
  "SessionStart",
  "PreToolUse",
  "PostToolUse",
  "UserPromptSubmit",
  "Stop",
  "PreCompact",
  "PostCompact",
  "SubagentStart",
  "SubagentStop",
] as const;

/** Seconds Codex waits for a hook before running the call without it. */
const TIMEOUT_SECONDS = 60;

export function registerCodex<S extends Record<string, OptionSpec>>(
  hooks: Command,
  options: S,
  run: (o: OptionsOf<S>) => Promise<void>,
): void {
  addOptions(
    hooks.command("codex").description("answer one OpenAI Codex CLI hook event read from stdin"),
    options,
  ).action((o: OptionsOf<S>) => run(o));
}

export function codexHooksPath(o: HostInstallOptions): string {
  if (!o.user) return resolve(".codex", "hooks.json");
  return join(process.env.CODEX_HOME || join(homedir(), ".codex"), "hooks.json");
}

/** Adds Warden's command hook to every event Codex fires (no matcher: every tool). */
export function mergeCodexHooks(path: string, file: Record<string, unknown>, command: string) {
  const entry = () => ({ hooks: [{ type: "command", command, timeout: TIMEOUT_SECONDS }] });
  return mergeEvents(path, file, CODEX_INSTALL_EVENTS, entry, () => command);
}

export function installCodex(ctx: CliContext, o: HostInstallOptions): void {
  requireFailOpenAck("Codex", "times out, crashes or prints an answer Codex cannot parse", o);
  const path = codexHooksPath(o);
  const merged = mergeCodexHooks(path, readSettings(path), o.command ?? hookEntryCommand("codex"));
  writeInstalled(ctx, path, merged, [
    "warning: Codex fails open on a hook timeout, crash or unparsable answer (accepted with --accept-fail-open).",
    "next: start codex and review and trust the new hooks (Codex runs a non-managed hook only once trusted).",
  ]);
}
