// The CLI's connection to the outside: streams and exit codes, injectable for tests.
import { readFileSync } from "node:fs";
import { CliError, parseStrictJson, WardenError } from "../contracts/index.js";
import { hintFor } from "./hints.js";

export { type CliContext, type CliIo, EXIT, processIo } from "./context.js";

/** A file's bytes; a file that cannot be read is bad input, named by its errno code only. */
function readInputFile(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new CliError(
      "ERR_CLI_INPUT",
      `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? "error"}`,
    );
  }
}

/** Reads a UTF-8 text file of at most `maxBytes` bytes. */
export function readTextFile(path: string, maxBytes: number): string {
  const bytes = readInputFile(path);
  if (bytes.byteLength > maxBytes) {
    throw new CliError("ERR_CLI_INPUT", `${path} is larger than ${maxBytes} bytes`);
  }
  return bytes.toString("utf8");
}

/** Reads a file and parses it as strict JSON (duplicate keys and __proto__ rejected). */
export function readJsonFile(path: string): unknown {
  return parseStrictJson(readInputFile(path).toString("utf8"));
}

/** The error line, then a hint for common mistakes (port in use, missing key file). */
export function formatError(err: unknown): string {
  if (err instanceof WardenError) return `warden: ${err.code}: ${err.message}\n${hintFor(err)}`;
  return `warden: ${err instanceof Error ? err.message : String(err)}\n${hintFor(err)}`;
}
