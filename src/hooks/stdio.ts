// The subprocess transport (§4.1): JSON lines over stdin/stdout, long-lived. Each input
// line is one message; each gets exactly one output line, in order:
//   {"aarts_version": "1"}            → {"compatible": …, "engine_id": …, "engine_version": …}
//   an AARTS event (has hook_point)   → a verdict
// The version check comes first; until it succeeds every event is refused. A line is
// buffered across reads until its newline; a line over `maxLineBytes` is answered with an
// ERR_HOOK_LINE_TOO_LARGE verdict and skipped to its newline; a line that is not JSON or
// an evaluation that throws is answered with the failure policy's verdict — the server
// never dies on input.
import type { Readable, Writable } from "node:stream";
import { parseStrictJson } from "../contracts/index.js";
import type { Engine } from "./engine.js";
import { type FailurePolicy, failureVerdict } from "./failure.js";

export const DEFAULT_MAX_LINE_BYTES = 4 * 1024 * 1024;

export interface JsonLinesOptions {
  maxLineBytes?: number;
  failure?: FailurePolicy;
}

function isVersionCheck(v: unknown): boolean {
  return (
    typeof v === "object" && v !== null && !Array.isArray(v) && "aarts_version" in v && !("hook_point" in v)
  );
}

/** Answers one line (never throws). */
export async function answerLine(engine: Engine, line: string, o: JsonLinesOptions = {}): Promise<unknown> {
  let value: unknown;
  try {
    value = parseStrictJson(line, { maxLength: o.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES });
  } catch {
    // Not JSON: the engine answers it as a malformed event (coded, journaled).
    return engine.handle(line);
  }
  try {
    return isVersionCheck(value) ? await engine.versionCheck(value) : await engine.handle(value);
  } catch (err) {
    return failureVerdict(o.failure, undefined, { open: 0 }, "ERR_HOOK_ENGINE_FAULT", (err as Error).message);
  }
}

/** Serves until `input` ends; resolves after the last answer is written. */
export function serveJsonLines(
  engine: Engine,
  input: Readable,
  output: Writable,
  o: JsonLinesOptions = {},
): Promise<void> {
  const max = o.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  let buffered: Buffer[] = [];
  let size = 0;
  let skipping = false;
  let chain: Promise<void> = Promise.resolve();
  const send = (answer: () => Promise<unknown>): void => {
    chain = chain.then(async () => {
      const a = await answer();
      output.write(`${JSON.stringify(a)}\n`);
    });
  };
  const tooLarge = () =>
    send(async () =>
      failureVerdict(
        undefined,
        undefined,
        { open: 0 },
        "ERR_HOOK_LINE_TOO_LARGE",
        `a line over ${max} bytes was skipped`,
      ),
    );
  const onChunk = (chunk: Buffer): void => {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, nl);
      start = nl + 1;
      if (skipping || size + piece.length > max) {
        if (!skipping) tooLarge();
        skipping = false;
      } else {
        const line = Buffer.concat([...buffered, piece])
          .toString("utf8")
          .replace(/\r$/, "");
        if (line.trim() !== "") send(() => answerLine(engine, line, o));
      }
      buffered = [];
      size = 0;
    }
    const rest = chunk.subarray(start);
    if (skipping) return;
    if (size + rest.length > max) {
      tooLarge();
      skipping = true;
      buffered = [];
      size = 0;
      return;
    }
    if (rest.length > 0) {
      buffered.push(Buffer.from(rest));
      size += rest.length;
    }
  };
  return new Promise((resolve, reject) => {
    input.on("data", (c: Buffer | string) => onChunk(typeof c === "string" ? Buffer.from(c) : c));
    input.on("error", reject);
    input.on("end", () => {
      if (!skipping && size > 0) {
        const line = Buffer.concat(buffered).toString("utf8");
        if (line.trim() !== "") send(() => answerLine(engine, line, o));
      }
      chain.then(resolve, reject);
    });
  });
}
