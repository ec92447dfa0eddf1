// The OpenAI-compatible adapter joined each attempt's timeout with the caller's signal
// through `AbortSignal.any`; a caller that passes one long-lived signal (an agent's
// shutdown, a run's signal over many calls) kept one entry per attempt in it, never pruned
// in Node 20–24 (nodejs/node#55351). Attempts now follow it only while they run
// (`timedScope`). A real loopback chat-completions server; sizes measured, never time.
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelError } from "../../src/contracts/index.js";
import { OpenAICompatibleAdapter } from "../../src/loop/index.js";
import { heldBy } from "../helpers/abort-held.js";

const CALLS = 500;
const request = { messages: [{ role: "user" as const, content: "hello" }], tools: [] };
let server: Server;
let base: string;
/** Requests the server holds without answering (the in-flight case). */
const held: ServerResponse[] = [];
let hold = false;
let arrived: (() => void) | undefined;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (hold) {
        held.push(res);
        arrived?.();
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }],
          usage: { prompt_tokens: 3, completion_tokens: 1 },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  for (const r of held) r.destroy();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const adapter = () =>
  new OpenAICompatibleAdapter({ baseUrl: base, model: "m", apiKeyEnv: null, maxRetries: 0 });

describe("a caller's long-lived signal grows with every model call", () => {
  it("500 model calls on one signal leave nothing with it", async () => {
    const app = new AbortController();
    const a = adapter();
    for (let i = 0; i < CALLS; i++) {
      const r = await a.complete(request, { signal: app.signal });
      expect(r.text).toBe("hi");
    }
    expect(heldBy(app.signal)).toBe(0);
  });

  it("a call in flight still aborts when the caller's signal does: ERR_MODEL_ABORTED, nothing left with it", async () => {
    const app = new AbortController();
    hold = true;
    const reached = new Promise<void>((r) => {
      arrived = r;
    });
    const call = adapter()
      .complete(request, { signal: app.signal })
      .then(
        () => "answered",
        (e: unknown) => (e instanceof ModelError ? e.code : String(e)),
      );
    await reached;
    expect(heldBy(app.signal)).toBe(1);
    app.abort(new Error("shutting down"));
    expect(await call).toBe("ERR_MODEL_ABORTED");
    expect(heldBy(app.signal)).toBe(0);
    hold = false;
  });
});
