// The host side of the three AARTS transports (§4.1): how a HookHost reaches any engine.
//   in-process  an Engine object (`createEngine`) called directly
//   stdio       a long-lived child process speaking JSON lines (`warden hooks serve --stdio`
//               or another engine's command): one line out, one line back, in order
//   http        an engine behind HTTP (the sidecar's /v1/hooks routes) with a bearer token
// A transport only moves messages: it never decides. Every fault (a crashed child, a
// garbled line, a refused HTTP call) is a rejected promise with a coded HookError, which
// the HookHost turns into its failure policy.
import { type ChildProcess, spawn } from "node:child_process";
import { HookError, parseStrictJson, WardenError } from "../contracts/index.js";
import type { Engine } from "./engine.js";

/** Answers over 4 MiB are refused (an engine that floods the host is a fault). */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

export type TransportKind = "in-process" | "stdio" | "http";

export interface EngineTransport {
  readonly kind: TransportKind;
  /** §4.2 version check; resolves with the engine's raw answer (the host validates it). */
  versionCheck(request: { aarts_version: string }, signal: AbortSignal): Promise<unknown>;
  /** One event; resolves with the engine's raw answer (the host validates it as a verdict). */
  send(event: unknown, signal: AbortSignal): Promise<unknown>;
  close(): Promise<void>;
}

const fault = (message: string) => new HookError("ERR_HOOK_ENGINE_FAULT", message);

/** The engine in this process; its own errors never escape as anything but a coded fault. */
export function inProcessTransport(engine: Engine, options: { closeEngine?: boolean } = {}): EngineTransport {
  return {
    kind: "in-process",
    versionCheck: (req) => engine.versionCheck(req),
    send: (event) => engine.handle(event),
    close: async () => {
      if (options.closeEngine) await engine.close();
    },
  };
}

interface Waiting {
  resolve(v: unknown): void;
  reject(e: Error): void;
  /** Timed out or aborted: its answer, when it comes, is read and dropped (lines stay in order). */
  abandoned: boolean;
}

/**
 * A child process speaking JSON lines. Answers come back in the order messages were sent,
 * so a message whose caller gave up still owns the next answer line; that line is dropped.
 * A child that exits, a line that is not JSON or an oversized line fails every waiting
 * message and the transport (the stream cannot be resynchronised).
 */
class StdioTransport implements EngineTransport {
  readonly kind = "stdio" as const;
  readonly #child: ChildProcess;
  readonly #queue: Waiting[] = [];
  #buffer = "";
  #dead: HookError | undefined;

  readonly #hostSecret: Buffer | undefined;

  constructor(command: string, args: readonly string[], options: StdioTransportOptions) {
    this.#hostSecret = options.hostSecret;
    this.#child = spawn(command, args, {
      stdio: ["pipe", "pipe", "ignore"],
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      ...(options.env !== undefined ? { env: options.env } : {}),
    });
    this.#child.stdout?.setEncoding("utf8");
    this.#child.stdout?.on("data", (chunk: string) => this.#onData(chunk));
    this.#child.on("error", (e) => this.#die(`the engine process failed to start (${e.name})`));
    this.#child.on("exit", (code, signal) =>
      this.#die(`the engine process exited (${signal ?? `code ${code ?? "?"}`})`),
    );
    this.#child.stdin?.on("error", () => this.#die("the engine process closed its input"));
  }

  #die(message: string): void {
    if (this.#dead) return;
    this.#dead = fault(message);
    for (const w of this.#queue.splice(0)) w.reject(this.#dead);
    if (this.#child.exitCode === null) this.#child.kill("SIGKILL");
  }

  #onData(chunk: string): void {
    this.#buffer += chunk;
    if (this.#buffer.length > MAX_ANSWER_BYTES) {
      this.#die("an answer line over 4 MiB");
      return;
    }
    for (let nl = this.#buffer.indexOf("\n"); nl !== -1; nl = this.#buffer.indexOf("\n")) {
      const line = this.#buffer.slice(0, nl).replace(/\r$/, "");
      this.#buffer = this.#buffer.slice(nl + 1);
      if (line.trim() === "") continue;
      const w = this.#queue.shift();
      if (w === undefined) {
        this.#die("the engine answered a message that was not sent");
        return;
      }
      let value: unknown;
      try {
        value = parseStrictJson(line, { maxLength: MAX_ANSWER_BYTES });
      } catch {
        w.reject(fault("the engine's answer is not JSON"));
        this.#die("the engine wrote a line that is not JSON");
        return;
      }
      if (!w.abandoned) w.resolve(value);
    }
  }

  #exchange(message: unknown, signal: AbortSignal): Promise<unknown> {
    if (this.#dead) return Promise.reject(this.#dead);
    return new Promise((resolve, reject) => {
      const w: Waiting = { resolve, reject, abandoned: false };
      const onAbort = () => {
        w.abandoned = true;
        reject(new HookError("ERR_HOOK_TIMEOUT", "the engine did not answer in time"));
      };
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener("abort", onAbort, { once: true });
      this.#queue.push(w);
      this.#child.stdin?.write(`${JSON.stringify(message)}\n`);
    });
  }

  versionCheck(request: { aarts_version: string }, signal: AbortSignal): Promise<unknown> {
    const secret = this.#hostSecret;
    return this.#exchange(secret ? { ...request, host_secret: secret.toString("hex") } : request, signal);
  }

  send(event: unknown, signal: AbortSignal): Promise<unknown> {
    return this.#exchange(event, signal);
  }

  async close(): Promise<void> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return;
    const exited = new Promise<void>((r) => this.#child.once("exit", () => r()));
    this.#child.stdin?.end();
    const timer = setTimeout(() => this.#child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  }
}

export interface StdioTransportOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** The engine's host secret (Warden's: secretFile(hostSecretPath(hooksDir))), sent in the handshake. */
  hostSecret?: Buffer;
}

/** `warden hooks serve --stdio` or another engine's command (argv, no shell). */
export function stdioTransport(
  command: string,
  args: readonly string[] = [],
  options: StdioTransportOptions = {},
): EngineTransport {
  return new StdioTransport(command, args, options);
}

/** Splits an `--engine` command line on whitespace (no shell: no quoting, globbing or expansion). */
export function splitCommand(line: string): { command: string; args: string[] } {
  const [command, ...args] = line.trim().split(/\s+/);
  if (!command) throw new HookError("ERR_HOOK_CONFIG_INVALID", "an empty engine command");
  return { command, args };
}

function engineUrl(base: string): URL {
  let u: URL;
  try {
    u = new URL(base);
  } catch {
    throw new HookError("ERR_HOOK_CONFIG_INVALID", "the engine URL does not parse");
  }
  if ((u.protocol !== "http:" && u.protocol !== "https:") || u.username || u.password || u.search) {
    throw new HookError(
      "ERR_HOOK_CONFIG_INVALID",
      "the engine URL must be http(s), without credentials or a query",
    );
  }
  return u;
}

/** Engine refusals the HTTP transport carries as coded errors (docs/http-api.md). */
const HTTP_CODES = new Set([
  "ERR_HOOK_HANDSHAKE_REQUIRED",
  "ERR_HOOK_EVENT_INVALID",
  "ERR_HOOK_POINT_UNKNOWN",
]);

async function post(url: URL, token: string, body: unknown, signal: AbortSignal): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      // The token must never follow a redirect to another origin.
      redirect: "error",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
      signal,
    });
  } catch (err) {
    if (signal.aborted) throw new HookError("ERR_HOOK_TIMEOUT", "the engine did not answer in time");
    throw fault(`the engine is unreachable (${err instanceof Error ? err.name : "error"})`);
  }
  if (Number(res.headers.get("content-length") ?? 0) > MAX_ANSWER_BYTES) {
    await res.body?.cancel();
    throw fault("an answer over 4 MiB");
  }
  const text = await res.text();
  if (text.length > MAX_ANSWER_BYTES) throw fault("an answer over 4 MiB");
  let value: unknown;
  try {
    value = parseStrictJson(text, { maxLength: MAX_ANSWER_BYTES });
  } catch {
    throw fault(`the engine answered HTTP ${res.status} with a body that is not JSON`);
  }
  if (res.ok) return value;
  const code = (value as { error?: { code?: unknown } } | null)?.error?.code;
  if (typeof code === "string" && HTTP_CODES.has(code))
    throw new HookError(
      code as "ERR_HOOK_EVENT_INVALID",
      `the engine refused the event (HTTP ${res.status})`,
    );
  throw fault(
    `the engine answered HTTP ${res.status}${typeof code === "string" ? ` ${code.slice(0, 64)}` : ""}`,
  );
}

/** An engine behind HTTP: POST <base>/v1/hooks/handshake and /v1/hooks/events, bearer token. */
export function httpTransport(base: string, token: string): EngineTransport {
  const root = engineUrl(base.endsWith("/") ? base : `${base}/`);
  if (!/^[\x21-\x7e]{1,4096}$/.test(token))
    throw new HookError("ERR_HOOK_CONFIG_INVALID", "the engine token must be printable ASCII");
  const handshake = new URL("v1/hooks/handshake", root);
  const events = new URL("v1/hooks/events", root);
  return {
    kind: "http",
    versionCheck: (req, signal) => post(handshake, token, req, signal),
    send: (event, signal) => post(events, token, event, signal),
    close: async () => {},
  };
}

/** A thrown value's stable code, for the failure policy and the host's log. */
export function codeOf(err: unknown): string {
  return err instanceof WardenError && err.code.startsWith("ERR_HOOK_") ? err.code : "ERR_HOOK_ENGINE_FAULT";
}
