// `warden hooks cursor` (one Cursor hook event on stdin → Cursor's answer) and
// `warden hooks install cursor [--project|--user]` (writes .cursor/hooks.json or
// ~/.cursor/hooks.json). The event flow is the one every host adapter shares (hooks.ts
// hostHook over src/hooks/host-adapter-common.ts); this file adds Cursor's registration.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { Command } from "commander";
import { CliError, parseStrictJson } from "../../contracts/index.js";
import { CURSOR_EVENTS } from "../../hooks/index.js";
import type { CliContext } from "../io.js";
import { addOptions, type OptionSpec, type OptionsOf } from "../options.js";
import { hookEntryCommand } from "./hook-command.js";

export function registerCursor<S extends Record<string, OptionSpec>>(
  hooks: Command,
  options: S,
  run: (o: OptionsOf<S>) => Promise<void>,
): void {
  addOptions(
    hooks.command("cursor").description("answer one Cursor hook event read from stdin"),
    options,
  ).action((o: OptionsOf<S>) => run(o));
}

type HooksFile = Record<string, unknown> & { version?: unknown; hooks?: Record<string, unknown[]> };

/** Adds Warden's entry for every Cursor event it handles; other hooks and fields are kept. */
export function mergeCursorHooks(file: HooksFile, command: string): { file: HooksFile; added: string[] } {
  const hooks: Record<string, unknown[]> = { ...(file.hooks ?? {}) };
  const added: string[] = [];
  for (const event of CURSOR_EVENTS) {
    const list = Array.isArray(hooks[event]) ? [...(hooks[event] as unknown[])] : [];
    if (JSON.stringify(list).includes(JSON.stringify(command))) continue;
    list.push({ command });
    hooks[event] = list;
    added.push(event);
  }
  return { file: { ...file, version: file.version ?? 1, hooks }, added };
}

function readHooksFile(path: string): HooksFile {
  if (!existsSync(path)) return { version: 1 };
  const parsed = parseStrictJson(readFileSync(path, "utf8"));
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new CliError("ERR_CLI_INPUT", `${path} is not a JSON object; not changed`);
  }
  const file = parsed as HooksFile;
  if (file.version !== undefined && file.version !== 1) {
    throw new CliError("ERR_CLI_INPUT", `${path}: version ${String(file.version)} is not 1; not changed`);
  }
  if (file.hooks !== undefined && (typeof file.hooks !== "object" || Array.isArray(file.hooks))) {
    throw new CliError("ERR_CLI_INPUT", `${path}: "hooks" is not an object; not changed`);
  }
  return file;
}

export function installCursor(
  ctx: CliContext,
  o: { project?: boolean | undefined; user?: boolean | undefined; command?: string | undefined },
): void {
  const path = o.user ? join(homedir(), ".cursor", "hooks.json") : resolve(".cursor", "hooks.json");
  const { file, added } = mergeCursorHooks(readHooksFile(path), o.command ?? hookEntryCommand("cursor"));
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(file, null, 2)}\n`);
  ctx.io.out(
    added.length > 0 ? `${path}: added Warden for ${added.join(", ")}\n` : `${path}: already installed\n`,
  );
}
