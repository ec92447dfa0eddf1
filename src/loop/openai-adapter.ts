// A ModelAdapter for any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM,
// Ollama, llama.cpp, LiteLLM...). The provider is a remote party like any other: the
// response is size-limited, parsed strictly (duplicate keys rejected) and checked with
// a zod schema, so a malformed or hostile response becomes a coded ModelError, never a
// crash or a half-understood turn. Transient failures (network, timeouts, 408/429/5xx)
// are retried a bounded number of times with exponential backoff and Retry-After. The
// API key comes from an environment variable and never appears in errors.
import { ModelError, parseStrictJson, type TimedScope, timedScope } from "../contracts/index.js";
import {
  type ModelAdapter,
  type ModelCallOptions,
  type ModelRequest,
  type ModelResponse,
  parseToolArguments,
} from "./model.js";
import { ResponseSchema, toWireMessage, toWireTool } from "./openai-wire.js";

export interface OpenAICompatibleOptions {
  /** Base URL up to the version segment, e.g. `https://api.openai.com/v1`; `/chat/completions` is appended. */
  baseUrl: string;
  model: string;
  /** Environment variable holding the API key (default `OPENAI_API_KEY`); `null` sends no key (local servers). */
  apiKeyEnv?: string | null;
  /** Where to read the key from (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Per-attempt timeout in ms (default 60 000). */
  timeoutMs?: number;
  /** Retries after the first attempt (default 3). */
  maxRetries?: number;
  /** First backoff delay in ms, doubled each retry (default 500). */
  initialBackoffMs?: number;
  /** Longest single wait, including a server's Retry-After (default 30 000). */
  maxBackoffMs?: number;
  /** Largest response body accepted (default 8 MiB). */
  maxResponseBytes?: number;
  temperature?: number;
  maxOutputTokens?: number;
  /** Injectables for tests. */
  fetch?: typeof fetch;
  random?: () => number;
}

const RETRYABLE_STATUS = new Set([408, 409, 425, 429, 500, 502, 503, 504]);

function positiveInt(name: string, v: number | undefined, dflt: number, min = 1): number {
  if (v === undefined) return dflt;
  if (!Number.isSafeInteger(v) || v < min) {
    throw new ModelError("ERR_MODEL_CONFIG_INVALID", `${name} must be an integer >= ${min}`);
  }
  return v;
}

/** Parses Retry-After (delta-seconds or HTTP-date) into ms; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, nowMs: number = Date.now()): number | null {
  if (value === null) return null;
  const v = value.trim();
  if (/^\d{1,10}$/.test(v)) return Number(v) * 1000;
  const t = Date.parse(v);
  return Number.isNaN(t) ? null : Math.max(0, t - nowMs);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new ModelError("ERR_MODEL_ABORTED", "model call aborted"));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ModelError("ERR_MODEL_ABORTED", "model call aborted"));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

async function readLimited(res: Response, max: number): Promise<string> {
  const declared = Number(res.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel().catch(() => {});
    throw new ModelError("ERR_MODEL_RESPONSE_TOO_LARGE", `response larger than ${max} bytes`);
  }
  if (res.body === null) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => {});
      throw new ModelError("ERR_MODEL_RESPONSE_TOO_LARGE", `response larger than ${max} bytes`);
    }
    chunks.push(value);
  }
  return new TextDecoder("utf-8", { fatal: false }).decode(Buffer.concat(chunks));
}

type Attempt =
  | { kind: "ok"; response: ModelResponse }
  | { kind: "retry"; error: ModelError; retryAfterMs: number | null }
  | { kind: "fail"; error: ModelError };

export class OpenAICompatibleAdapter implements ModelAdapter {
  readonly id: string;
  readonly #url: string;
  readonly #model: string;
  readonly #apiKey: string | null;
  readonly #timeoutMs: number;
  readonly #maxRetries: number;
  readonly #initialBackoffMs: number;
  readonly #maxBackoffMs: number;
  readonly #maxResponseBytes: number;
  readonly #temperature: number | undefined;
  readonly #maxOutputTokens: number | undefined;
  readonly #fetch: typeof fetch;
  readonly #random: () => number;

  constructor(options: OpenAICompatibleOptions) {
    let url: URL;
    try {
      url = new URL(options.baseUrl);
    } catch {
      throw new ModelError("ERR_MODEL_CONFIG_INVALID", "baseUrl is not a URL");
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") {
      throw new ModelError("ERR_MODEL_CONFIG_INVALID", "baseUrl must be http(s)");
    }
    if (url.username !== "" || url.password !== "") {
      throw new ModelError("ERR_MODEL_CONFIG_INVALID", "baseUrl must not carry credentials; use apiKeyEnv");
    }
    if (url.search !== "" || url.hash !== "") {
      throw new ModelError("ERR_MODEL_CONFIG_INVALID", "baseUrl must not have a query or fragment");
    }
    if (typeof options.model !== "string" || options.model.length === 0 || options.model.length > 256) {
      throw new ModelError("ERR_MODEL_CONFIG_INVALID", "model must be a non-empty name");
    }
    const envName = options.apiKeyEnv === undefined ? "OPENAI_API_KEY" : options.apiKeyEnv;
    if (envName === null) {
      this.#apiKey = null;
    } else {
      const key = (options.env ?? process.env)[envName];
      if (key === undefined || key.trim() === "") {
        throw new ModelError("ERR_MODEL_API_KEY_MISSING", `environment variable ${envName} is not set`);
      }
      if (!/^[\x21-\x7e]+$/.test(key.trim())) {
        throw new ModelError(
          "ERR_MODEL_CONFIG_INVALID",
          `environment variable ${envName} is not a usable API key`,
        );
      }
      this.#apiKey = key.trim();
    }
    this.#url = `${url.href.replace(/\/+$/, "")}/chat/completions`;
    this.#model = options.model;
    this.#timeoutMs = positiveInt("timeoutMs", options.timeoutMs, 60_000);
    this.#maxRetries = positiveInt("maxRetries", options.maxRetries, 3, 0);
    this.#initialBackoffMs = positiveInt("initialBackoffMs", options.initialBackoffMs, 500, 0);
    this.#maxBackoffMs = positiveInt("maxBackoffMs", options.maxBackoffMs, 30_000, 0);
    this.#maxResponseBytes = positiveInt("maxResponseBytes", options.maxResponseBytes, 8 * 1024 * 1024);
    if (options.temperature !== undefined && !(options.temperature >= 0 && options.temperature <= 2)) {
      throw new ModelError("ERR_MODEL_CONFIG_INVALID", "temperature must be between 0 and 2");
    }
    this.#temperature = options.temperature;
    this.#maxOutputTokens =
      options.maxOutputTokens === undefined
        ? undefined
        : positiveInt("maxOutputTokens", options.maxOutputTokens, 1);
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#random = options.random ?? Math.random;
    this.id = `openai:${this.#model}`;
  }

  async complete(request: ModelRequest, options: ModelCallOptions = {}): Promise<ModelResponse> {
    const body = JSON.stringify({
      model: this.#model,
      messages: request.messages.map(toWireMessage),
      ...(request.tools.length > 0 ? { tools: request.tools.map(toWireTool), tool_choice: "auto" } : {}),
      ...(this.#temperature !== undefined ? { temperature: this.#temperature } : {}),
      ...(this.#maxOutputTokens !== undefined ? { max_tokens: this.#maxOutputTokens } : {}),
    });
    let last: ModelError = new ModelError("ERR_MODEL_NETWORK", "no attempt made");
    for (let attempt = 0; attempt <= this.#maxRetries; attempt++) {
      if (options.signal?.aborted) throw new ModelError("ERR_MODEL_ABORTED", "model call aborted");
      const r = await this.#attempt(body, options.signal);
      if (r.kind === "ok") return r.response;
      if (r.kind === "fail") throw r.error;
      last = r.error;
      if (attempt === this.#maxRetries) break;
      const backoff =
        Math.min(this.#maxBackoffMs, this.#initialBackoffMs * 2 ** attempt) * (0.5 + this.#random() / 2);
      if (r.retryAfterMs !== null && r.retryAfterMs > this.#maxBackoffMs) {
        // The server asks for longer than we are willing to wait: give up now rather than hang.
        throw r.error;
      }
      await sleep(Math.round(Math.max(backoff, r.retryAfterMs ?? 0)), options.signal);
    }
    throw new ModelError(
      last.code as "ERR_MODEL_NETWORK",
      `${last.message} (after ${this.#maxRetries + 1} attempts)`,
      {
        ...(last.details ? { details: last.details } : {}),
      },
    );
  }

  /**
   * One attempt, bounded by `timeoutMs`. The caller's signal may outlive many calls (a run's,
   * an application's): the attempt follows it only while it runs (`timedScope`, not
   * `AbortSignal.any`, which leaves an entry per attempt with it in Node 20–24).
   */
  async #attempt(body: string, outer: AbortSignal | undefined): Promise<Attempt> {
    const scope = timedScope(outer, this.#timeoutMs);
    try {
      return await this.#post(body, outer, scope);
    } finally {
      scope.release();
    }
  }

  async #post(body: string, outer: AbortSignal | undefined, scope: TimedScope): Promise<Attempt> {
    const signal = scope.signal;
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json",
    };
    if (this.#apiKey !== null) headers.authorization = `Bearer ${this.#apiKey}`;
    let text: string;
    let res: Response;
    try {
      res = await this.#fetch(this.#url, { method: "POST", headers, body, signal, redirect: "error" });
      if (!res.ok) {
        await res.body?.cancel().catch(() => {});
        const err = new ModelError("ERR_MODEL_HTTP_STATUS", `model endpoint answered HTTP ${res.status}`, {
          details: { status: res.status },
        });
        return RETRYABLE_STATUS.has(res.status)
          ? { kind: "retry", error: err, retryAfterMs: parseRetryAfter(res.headers.get("retry-after")) }
          : { kind: "fail", error: err };
      }
      text = await readLimited(res, this.#maxResponseBytes);
    } catch (err) {
      if (err instanceof ModelError) return { kind: "fail", error: err };
      if (outer?.aborted)
        return { kind: "fail", error: new ModelError("ERR_MODEL_ABORTED", "model call aborted") };
      if (scope.timedOut) {
        return {
          kind: "retry",
          error: new ModelError("ERR_MODEL_TIMEOUT", `model call timed out after ${this.#timeoutMs} ms`),
          retryAfterMs: null,
        };
      }
      // The fetch error text may echo the URL; keep only its class.
      return {
        kind: "retry",
        error: new ModelError(
          "ERR_MODEL_NETWORK",
          `model endpoint unreachable (${(err as Error)?.name ?? "error"})`,
        ),
        retryAfterMs: null,
      };
    }
    return { kind: "ok", response: this.#parse(text) };
  }

  #parse(text: string): ModelResponse {
    let json: unknown;
    try {
      json = parseStrictJson(text, { maxLength: this.#maxResponseBytes, maxDepth: 64 });
    } catch (err) {
      throw new ModelError("ERR_MODEL_RESPONSE_INVALID", "model response is not valid JSON", { cause: err });
    }
    const parsed = ResponseSchema.safeParse(json);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      const path = first?.path.map(String).join(".") || "(root)";
      throw new ModelError("ERR_MODEL_RESPONSE_INVALID", `model response invalid at ${path}`, {
        details: { path },
      });
    }
    const choice = parsed.data.choices[0]!;
    const calls = choice.message.tool_calls ?? [];
    const toolCalls = calls.map((c, i) => ({
      id: c.id ?? `call_${i + 1}`,
      name: c.function.name,
      arguments: parseToolArguments(c.function.arguments ?? ""),
    }));
    const content = choice.message.content ?? null;
    const usage = parsed.data.usage;
    return {
      text: content,
      toolCalls,
      usage: usage
        ? { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens }
        : { inputTokens: 0, outputTokens: Math.ceil(text.length / 4) },
      ...(choice.finish_reason ? { finishReason: choice.finish_reason } : {}),
    };
  }
}
