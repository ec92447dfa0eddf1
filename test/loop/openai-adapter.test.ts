import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ModelError } from "../../src/contracts/index.js";
import {
  type ModelRequest,
  OpenAICompatibleAdapter,
  type OpenAICompatibleOptions,
  parseRetryAfter,
  runLoop,
} from "../../src/loop/index.js";
import { FakeCatalog, FakeExecutor, FakeGate, MemoryJournal } from "./fakes.js";

// A local server that speaks the chat-completions API; each test queues its responses.
type Reply = (req: IncomingMessage, res: ServerResponse, body: string) => void;

const KEY = "sk-test-0123456789abcdef";
let server: Server;
let base: string;
let queue: Reply[] = [];
let received: { headers: IncomingMessage["headers"]; body: Record<string, unknown>; url: string }[] = [];

function json(status: number, value: unknown, headers: Record<string, string> = {}): Reply {
  return (_req, res) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(typeof value === "string" ? value : JSON.stringify(value));
  };
}

function completion(
  message: Record<string, unknown>,
  usage: unknown = { prompt_tokens: 11, completion_tokens: 7 },
) {
  return json(200, {
    id: "chatcmpl-1",
    object: "chat.completion",
    choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: "stop" }],
    ...(usage === undefined ? {} : { usage }),
  });
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString("utf8");
    });
    req.on("end", () => {
      received.push({ headers: req.headers, body: body ? JSON.parse(body) : {}, url: req.url ?? "" });
      const reply = queue.shift();
      if (reply === undefined) {
        res.writeHead(500);
        res.end("no reply queued");
        return;
      }
      reply(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

beforeEach(() => {
  queue = [];
  received = [];
});

function adapter(over: Partial<OpenAICompatibleOptions> = {}): OpenAICompatibleAdapter {
  return new OpenAICompatibleAdapter({
    baseUrl: base,
    model: "test-model",
    env: { OPENAI_API_KEY: KEY },
    initialBackoffMs: 1,
    maxBackoffMs: 50,
    timeoutMs: 2_000,
    random: () => 0,
    ...over,
  });
}

const request: ModelRequest = {
  messages: [
    { role: "system", content: "be brief" },
    { role: "user", content: "read notes" },
    {
      role: "assistant",
      content: null,
      toolCalls: [{ id: "c1", name: "read_file", argumentsJson: '{"path":"a"}' }],
    },
    { role: "tool", toolCallId: "c1", name: "read_file", content: '{"status":"ok"}' },
  ],
  tools: [
    {
      name: "read_file",
      description: "read a file",
      inputSchema: { type: "object", properties: { path: { type: "string" } } },
    },
  ],
};

async function codeOf(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ModelError);
  return (err as ModelError).code;
}

describe("OpenAICompatibleAdapter: the request", () => {
  it("posts the conversation and contract-derived tools in chat-completions form, with the key as a bearer token", async () => {
    queue.push(completion({ content: "done" }));
    const r = await adapter().complete(request);
    expect(r.text).toBe("done");
    expect(r.toolCalls).toEqual([]);
    expect(r.usage).toEqual({ inputTokens: 11, outputTokens: 7 });
    const sent = received[0]!;
    expect(sent.url).toBe("/v1/chat/completions");
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent.body).toEqual({
      model: "test-model",
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "read notes" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "c1", type: "function", function: { name: "read_file", arguments: '{"path":"a"}' } },
          ],
        },
        { role: "tool", tool_call_id: "c1", content: '{"status":"ok"}' },
      ],
      tools: [
        {
          type: "function",
          function: {
            name: "read_file",
            description: "read a file",
            parameters: { type: "object", properties: { path: { type: "string" } } },
          },
        },
      ],
      tool_choice: "auto",
    });
  });

  it("sends no key when apiKeyEnv is null (local servers)", async () => {
    queue.push(completion({ content: "x" }));
    await adapter({ apiKeyEnv: null }).complete(request);
    expect(received[0]?.headers.authorization).toBeUndefined();
  });

  it("parses tool calls, keeping arguments that are not JSON as a coded failure (not an exception)", async () => {
    queue.push(
      completion({
        content: null,
        tool_calls: [
          { id: "a", type: "function", function: { name: "read_file", arguments: '{"path":"notes.txt"}' } },
          { id: "b", type: "function", function: { name: "read_file", arguments: '{"path": ' } },
          {
            id: "c",
            type: "function",
            function: { name: "read_file", arguments: '{"path":"x","path":"/etc/shadow"}' },
          },
          { id: "d", type: "function", function: { name: "read_file", arguments: "[1,2]" } },
          { id: "e", type: "function", function: { name: "noop", arguments: "" } },
        ],
      }),
    );
    const r = await adapter().complete(request);
    expect(r.toolCalls.map((c) => [c.id, c.arguments.ok])).toEqual([
      ["a", true],
      ["b", false],
      ["c", false],
      ["d", false],
      ["e", true],
    ]);
    expect(r.toolCalls[0]?.arguments).toEqual({ ok: true, value: { path: "notes.txt" } });
    expect(r.toolCalls[1]?.arguments).toMatchObject({
      ok: false,
      code: "ERR_MODEL_TOOL_ARGUMENTS",
      raw: '{"path": ',
    });
  });
});

describe("OpenAICompatibleAdapter: malformed responses are coded errors", () => {
  const cases: [string, Reply][] = [
    ["a body that is not JSON", json(200, "{not json")],
    ["an empty body", json(200, "")],
    ["no choices", json(200, { id: "x" })],
    ["an empty choices list", json(200, { choices: [] })],
    ["a choice without a message", json(200, { choices: [{ finish_reason: "stop" }] })],
    ["content of the wrong type", json(200, { choices: [{ message: { content: 42 } }] })],
    [
      "a tool call without a function name",
      json(200, { choices: [{ message: { tool_calls: [{ id: "x", function: { arguments: "{}" } }] } }] }),
    ],
    [
      "negative token usage",
      json(200, {
        choices: [{ message: { content: "x" } }],
        usage: { prompt_tokens: -1, completion_tokens: 1 },
      }),
    ],
    ["duplicate keys in the response", json(200, '{"choices":[{"message":{"content":"a"}}],"choices":[]}')],
    ["a JSON array", json(200, "[]")],
  ];
  for (const [name, reply] of cases) {
    it(`${name} → ERR_MODEL_RESPONSE_INVALID, without retrying`, async () => {
      queue.push(reply);
      expect(await codeOf(adapter().complete(request))).toBe("ERR_MODEL_RESPONSE_INVALID");
      expect(received).toHaveLength(1);
    });
  }

  it("a body over the size limit → ERR_MODEL_RESPONSE_TOO_LARGE", async () => {
    queue.push(completion({ content: "A".repeat(10_000) }));
    expect(await codeOf(adapter({ maxResponseBytes: 1_000 }).complete(request))).toBe(
      "ERR_MODEL_RESPONSE_TOO_LARGE",
    );
  });

  it("a chunked body over the size limit (no content-length) → ERR_MODEL_RESPONSE_TOO_LARGE", async () => {
    queue.push((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      for (let i = 0; i < 20; i++) res.write("A".repeat(500));
      res.end();
    });
    expect(await codeOf(adapter({ maxResponseBytes: 1_000 }).complete(request))).toBe(
      "ERR_MODEL_RESPONSE_TOO_LARGE",
    );
  });

  it("missing usage is estimated rather than treated as free", async () => {
    queue.push(completion({ content: "x".repeat(40) }, undefined));
    const r = await adapter().complete(request);
    expect(r.usage.outputTokens).toBeGreaterThan(0);
  });
});

describe("OpenAICompatibleAdapter: retries, backoff, timeouts", () => {
  it("500 then success: retried once", async () => {
    queue.push(json(500, { error: "boom" }), completion({ content: "ok" }));
    const r = await adapter().complete(request);
    expect(r.text).toBe("ok");
    expect(received).toHaveLength(2);
  });

  it("429 with Retry-After: 0 is retried", async () => {
    queue.push(json(429, { error: "slow down" }, { "retry-after": "0" }), completion({ content: "ok" }));
    expect((await adapter().complete(request)).text).toBe("ok");
    expect(received).toHaveLength(2);
  });

  it("429 asking for longer than maxBackoffMs gives up at once instead of hanging", async () => {
    queue.push(json(429, {}, { "retry-after": "3600" }), completion({ content: "never" }));
    const err = await adapter()
      .complete(request)
      .then(
        () => null,
        (e: unknown) => e as ModelError,
      );
    expect(err?.code).toBe("ERR_MODEL_HTTP_STATUS");
    expect(err?.details).toEqual({ status: 429 });
    expect(received).toHaveLength(1);
  });

  it("persistent 503: bounded attempts, then ERR_MODEL_HTTP_STATUS", async () => {
    for (let i = 0; i < 5; i++) queue.push(json(503, {}));
    expect(await codeOf(adapter({ maxRetries: 2 }).complete(request))).toBe("ERR_MODEL_HTTP_STATUS");
    expect(received).toHaveLength(3);
  });

  it("400 is not retried", async () => {
    queue.push(json(400, { error: { message: "bad" } }), completion({ content: "never" }));
    expect(await codeOf(adapter().complete(request))).toBe("ERR_MODEL_HTTP_STATUS");
    expect(received).toHaveLength(1);
  });

  it("a server that never answers: per-attempt timeout, retried, then ERR_MODEL_TIMEOUT", async () => {
    queue.push(
      () => {},
      () => {},
    );
    expect(await codeOf(adapter({ timeoutMs: 100, maxRetries: 1 }).complete(request))).toBe(
      "ERR_MODEL_TIMEOUT",
    );
    expect(received).toHaveLength(2);
  });

  it("a closed port: ERR_MODEL_NETWORK after the retries", async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const a = adapter({ baseUrl: `http://127.0.0.1:${port}/v1`, maxRetries: 1 });
    expect(await codeOf(a.complete(request))).toBe("ERR_MODEL_NETWORK");
  });

  it("the caller's abort is final: ERR_MODEL_ABORTED, no retry", async () => {
    const ac = new AbortController();
    queue.push(() => ac.abort());
    expect(await codeOf(adapter().complete(request, { signal: ac.signal }))).toBe("ERR_MODEL_ABORTED");
    expect(received).toHaveLength(1);
  });

  it("parseRetryAfter reads delta-seconds and HTTP dates", () => {
    expect(parseRetryAfter("2")).toBe(2_000);
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:10 GMT", Date.parse("2026-01-01T00:00:00Z"))).toBe(10_000);
    expect(parseRetryAfter("soon")).toBeNull();
    expect(parseRetryAfter(null)).toBeNull();
  });
});

describe("OpenAICompatibleAdapter: the API key", () => {
  it("a missing key variable → ERR_MODEL_API_KEY_MISSING", () => {
    expect(() => adapter({ env: {} })).toThrow(
      expect.objectContaining({ code: "ERR_MODEL_API_KEY_MISSING" }),
    );
    expect(() => adapter({ env: { OPENAI_API_KEY: " " } })).toThrow(
      expect.objectContaining({ code: "ERR_MODEL_API_KEY_MISSING" }),
    );
  });

  it("reads the key from the named variable", async () => {
    queue.push(completion({ content: "x" }));
    await adapter({ apiKeyEnv: "LOCAL_LLM_KEY", env: { LOCAL_LLM_KEY: "k-1" } }).complete(request);
    expect(received[0]?.headers.authorization).toBe("Bearer k-1");
  });

  it("never puts the key in an error, even when the server echoes it", async () => {
    queue.push(json(401, { error: { message: `Incorrect API key provided: ${KEY}` } }));
    const err = await adapter()
      .complete(request)
      .then(
        () => null,
        (e: unknown) => e as ModelError,
      );
    expect(err?.code).toBe("ERR_MODEL_HTTP_STATUS");
    expect(`${err?.message} ${JSON.stringify(err?.details)}`).not.toContain(KEY);
  });

  it("does not follow redirects (the key must not travel to another origin)", async () => {
    const other = createServer((_req, res) => {
      res.writeHead(200);
      res.end("{}");
    });
    let hits = 0;
    other.on("request", () => {
      hits += 1;
    });
    await new Promise<void>((r) => other.listen(0, "127.0.0.1", r));
    const target = `http://127.0.0.1:${(other.address() as AddressInfo).port}/steal`;
    queue.push((_req, res) => {
      res.writeHead(307, { location: target });
      res.end();
    });
    expect(await codeOf(adapter({ maxRetries: 0 }).complete(request))).toBe("ERR_MODEL_NETWORK");
    expect(hits).toBe(0);
    await new Promise((r) => other.close(r));
  });

  const badConfigs: [string, Partial<OpenAICompatibleOptions>][] = [
    ["a non-URL base", { baseUrl: "not a url" }],
    ["a file: URL", { baseUrl: "file:///etc/passwd" }],
    ["credentials in the URL", { baseUrl: "http://user:pw@127.0.0.1/v1" }],
    ["a query string", { baseUrl: "http://127.0.0.1/v1?x=1" }],
    ["an empty model", { model: "" }],
    ["a zero timeout", { timeoutMs: 0 }],
    ["negative retries", { maxRetries: -1 }],
    ["temperature 3", { temperature: 3 }],
    ["a key with a newline (header injection)", { env: { OPENAI_API_KEY: "sk-1\nX-Evil: 1" } }],
  ];
  for (const [name, over] of badConfigs) {
    it(`rejects ${name} with ERR_MODEL_CONFIG_INVALID`, () => {
      expect(() => adapter(over)).toThrow(expect.objectContaining({ code: "ERR_MODEL_CONFIG_INVALID" }));
    });
  }
});

describe("OpenAICompatibleAdapter driving the loop", () => {
  it("a tool call, a denial fed back, and a final answer, over HTTP", async () => {
    queue.push(
      completion({
        content: null,
        tool_calls: [
          { id: "t1", type: "function", function: { name: "read_file", arguments: '{"path":"secret.env"}' } },
        ],
      }),
      completion({ content: "I may not read that file." }),
    );
    const gate = new FakeGate(() => ({ decision: "deny", reasons: ["secrets are off limits"] }));
    const journal = new MemoryJournal();
    const r = await runLoop({
      model: adapter(),
      gate,
      executor: new FakeExecutor(),
      journal,
      tools: new FakeCatalog(),
      principalId: "agent-1",
      task: "read secret.env",
    });
    expect(r.reason).toBe("final_answer");
    expect(r.usage).toEqual({ inputTokens: 22, outputTokens: 14 });
    const second = received[1]?.body.messages as Record<string, unknown>[];
    expect(second.at(-1)).toEqual({
      role: "tool",
      tool_call_id: "t1",
      content: JSON.stringify({ status: "denied", decision: "deny", reasons: "secrets are off limits" }),
    });
    expect(journal.last("ReasoningComplete").body.model).toBe("openai:test-model");
  });

  it("a malformed response ends the run with model_error instead of escaping the loop", async () => {
    queue.push(json(200, "{oops"));
    const r = await runLoop({
      model: adapter(),
      gate: new FakeGate(),
      executor: new FakeExecutor(),
      journal: new MemoryJournal(),
      tools: new FakeCatalog(),
      principalId: "agent-1",
      task: "x",
    });
    expect(r.reason).toBe("model_error");
  });
});
