// The subprocess transport (§4.1): JSON lines over stdin/stdout, long-lived. Each input
// line is one message; each gets exactly one output line, in order:
//   {"aarts_version": "1"}            → {"compatible": …, "engine_id": …, "engine_version": …}
//   an AARTS event (has hook_point)   → a verdict
// The version check comes first; until it succeeds every event is refused. A line is
// buffered across reads until its newline; a line over `maxLineBytes` is answered with an
// ERR_HOOK_LINE_TOO_LARGE verdict and skipped to its newline; a line that is not JSON or
// an evaluation that throws is answered with the failure policy's verdict — the server
// never dies on input.
//
// Host authentication (docs/hooks-files.md "The stdio engine's host secret"): anyone who
// can start `warden hooks serve --stdio` can write lines to it, the agent included. The
// host's launcher proves it is the host by putting the secret of the hooks state directory
// (`host.secret`, 0600, which the agent cannot read) in the handshake:
//   {"aarts_version": "1", "host_secret": "<64 hex>"}
// Without it (or with a wrong one) the connection is served, but the events only the host
// may send — those that change what the engine remembers (HOST_ONLY_POINTS) — are refused
// with ERR_HOOK_UNAUTHENTICATED and journaled. In-process callers are the host
// (`trustedHost`).
import { timingSafeEqual } from "node:crypto";
import type { Readable, Writable } from "node:stream";
import { parseStrictJson } from "../contracts/index.js";
import { type Engine, verdictBody } from "./engine.js";
import { HOOK_VERDICT_EVENT } from "./events.js";
import { type FailurePolicy, failureVerdict } from "./failure.js";

export const DEFAULT_MAX_LINE_BYTES = 4 * 1024 * 1024;

export interface JsonLinesOptions {
  maxLineBytes?: number;
  failure?: FailurePolicy;
  /** The secret a handshake must present as `host_secret` (hex) for host-only events. */
  hostSecret?: Buffer;
  /** The caller is the host itself (in process): host-only events need no secret. */
  trustedHost?: boolean;
}

/** Events only the host may send: they change what the engine remembers or a session's life. */
export const HOST_ONLY_POINTS: ReadonlySet<string> = new Set([
  "PostAskResolution",
  "SessionStart",
  "SessionEnd",
]);

/** One connection's authentication, set by its handshake. */
export interface Connection {
  host: boolean;
}

function presents(secret: Buffer | undefined, value: unknown): boolean {
  if (secret === undefined || typeof value !== "string" || !/^[0-9a-f]{64}$/.test(value)) return false;
  const got = Buffer.from(value, "hex");
  return got.length === secret.length && timingSafeEqual(got, secret);
}

async function refuseUnauthenticated(engine: Engine, raw: Record<string, unknown>, hook: string) {
  const why = `${hook} is accepted only from the host (the handshake did not present the host secret)`;
  const v = failureVerdict(undefined, undefined, { open: 0 }, "ERR_HOOK_UNAUTHENTICATED", why);
  try {
    const body = verdictBody(raw, hook, v, { code: "ERR_HOOK_UNAUTHENTICATED", mode: "fail-closed" });
    await engine.runtime.journal.append({ type: HOOK_VERDICT_EVENT, body });
  } catch {
    // The refusal stands whether or not it could be recorded.
  }
  return v;
}

function isVersionCheck(v: unknown): boolean {
  return (
    typeof v === "object" && v !== null && !Array.isArray(v) && "aarts_version" in v && !("hook_point" in v)
  );
}

/** Answers one line (never throws). `conn` carries the connection's handshake result. */
export async function answerLine(
  engine: Engine,
  line: string,
  o: JsonLinesOptions = {},
  conn: Connection = { host: o.trustedHost === true },
): Promise<unknown> {
  let value: unknown;
  try {
    value = parseStrictJson(line, { maxLength: o.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES });
  } catch {
    // Not JSON: the engine answers it as a malformed event (coded, journaled).
    return engine.handle(line);
  }
  try {
    if (isVersionCheck(value)) {
      const { host_secret, ...request } = value as Record<string, unknown>;
      conn.host = o.trustedHost === true || presents(o.hostSecret, host_secret);
      return await engine.versionCheck(request);
    }
    const hook = (value as { hook_point?: unknown } | null)?.hook_point;
    if (!conn.host && typeof hook === "string" && HOST_ONLY_POINTS.has(hook))
      return await refuseUnauthenticated(engine, value as Record<string, unknown>, hook);
    return await engine.handle(value);
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
  const conn: Connection = { host: o.trustedHost === true };
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
        if (line.trim() !== "") send(() => answerLine(engine, line, o, conn));
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
        if (line.trim() !== "") send(() => answerLine(engine, line, o, conn));
      }
      chain.then(resolve, reject);
    });
  });
}
