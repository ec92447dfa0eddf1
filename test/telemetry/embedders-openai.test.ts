// The OpenAI-compatible embeddings adapter against a loopback server that speaks the API
// (POST /v1/embeddings, `{ model, input }` → `{ object: "list", data: [{ index, embedding }] }`).
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lexicalVector } from "../../src/context/index.js";
import { DriftTracker } from "../../src/gate/index.js";
import { openAIEmbedder } from "../../src/telemetry/index.js";
import { makeGate, req } from "../gate/harness.js";

let server: Server;
let base = "";
const seen: { auth?: string | undefined; body: { model: string; input: string[] } }[] = [];
let mode: "ok" | "500" | "short" | "nan" = "ok";

function readBody(r: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let s = "";
    r.on("data", (c) => {
      s += c;
    });
    r.on("end", () => resolve(s));
  });
}

beforeAll(async () => {
  server = createServer(async (rq, rs) => {
    const body = JSON.parse(await readBody(rq)) as { model: string; input: string[] };
    seen.push({ auth: rq.headers.authorization, body });
    if (rq.url !== "/v1/embeddings" || rq.method !== "POST") return void rs.writeHead(404).end();
    if (mode === "500") return void rs.writeHead(500).end('{"error":{"message":"overloaded"}}');
    // The server's "model" is the lexical vector, rounded as a JSON API would send it.
    const data = body.input.map((text, index) => {
      const e = Array.from(lexicalVector(text), (x) => Math.round(x * 1e6) / 1e6);
      if (mode === "nan") e[0] = "NaN" as unknown as number;
      return { object: "embedding", index, embedding: e };
    });
    const out = mode === "short" ? data.slice(1) : data;
    rs.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        object: "list",
        data: out,
        model: body.model,
        usage: { prompt_tokens: 1, total_tokens: 1 },
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe("openAIEmbedder over a loopback embeddings server", () => {
  it("sends the model, the texts and the bearer key, and returns one vector per text", async () => {
    mode = "ok";
    const e = openAIEmbedder({ baseUrl: base, model: "text-embedding-3-small", apiKey: "k-test" });
    const vs = await e.embed(["first text", "second text"]);
    expect(vs).toHaveLength(2);
    expect(vs[0]).toHaveLength(4096);
    const last = seen.at(-1)!;
    expect(last.auth).toBe("Bearer k-test");
    expect(last.body).toMatchObject({
      model: "text-embedding-3-small",
      input: ["first text", "second text"],
    });
    expect(e.id).toBe("openai:text-embedding-3-small");
  });

  it("drives the Gate's drift: an off-task action is stepped up", async () => {
    mode = "ok";
    const drift = new DriftTracker({ embedder: openAIEmbedder({ baseUrl: base, model: "m" }) });
    const h = await makeGate({
      yaml: "rules:\n  - { id: all, name: all, priority: 100, match: {}, decision: allow, reason: all }\n",
      gate: { drift },
    });
    const out = await h.gate.evaluate(
      req({
        originalRequest: "What is the weather forecast for Lisbon tomorrow?",
        parameters: { url: "https://paste.example.net/upload/ssh-keys" },
      }),
    );
    expect(out.drift?.embedder).toBe("openai:m");
    expect(out.decision).toBe("step_up");
  });

  it.each([
    ["500", "an error status"],
    ["short", "fewer embeddings than texts"],
    ["nan", "a non-numeric value"],
  ] as const)("a server answering %s (%s) is ERR_CONTEXT_EMBEDDER_FAILED", async (m, _what) => {
    mode = m;
    const e = openAIEmbedder({ baseUrl: base, model: "m" });
    await expect(e.embed(["a", "b"])).rejects.toMatchObject({ code: "ERR_CONTEXT_EMBEDDER_FAILED" });
  });

  it("an unreachable endpoint is ERR_CONTEXT_EMBEDDER_FAILED, a bad URL a config error", async () => {
    const e = openAIEmbedder({ baseUrl: "http://127.0.0.1:1/v1", model: "m", timeoutMs: 500 });
    await expect(e.embed(["a"])).rejects.toMatchObject({ code: "ERR_CONTEXT_EMBEDDER_FAILED" });
    expect(() => openAIEmbedder({ baseUrl: "file:///etc/passwd", model: "m" })).toThrow(
      expect.objectContaining({ code: "ERR_CONTEXT_CONFIG_INVALID" }),
    );
  });
});
