// The CLI's connection to the outside: streams and exit codes, injectable for tests.
import { readFileSync } from "node:fs";
import { CliError, parseStrictJson, WardenError } from "../contracts/index.js";

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** True when stdout is an interactive terminal (progress bars, colours). */
  isTTY: boolean;
}

export const processIo: CliIo = {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  isTTY: Boolean(process.stdout.isTTY),
};

/** Exit codes shared by every command. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

export interface CliContext {
  io: CliIo;
  exitCode: number;
}

/** Reads a file and parses it as strict JSON (duplicate keys and __proto__ rejected). */
export function readJsonFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new CliError(
      "ERR_CLI_INPUT",
      `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? "error"}`,
    );
  }
  return parseStrictJson(text);
}

export function formatError(err: unknown): string {
  if (err instanceof WardenError) return `warden: ${err.code}: ${err.message}\n`;
  return `warden: ${err instanceof Error ? err.message : String(err)}\n`;
}
