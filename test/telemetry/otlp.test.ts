// `telemetry.otlp` in the sidecar configuration: the sidecar registers the OpenTelemetry
// SDK and its spans reach an OTLP/HTTP collector (a loopback receiver here) by shutdown.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { echo, startTestSidecar, TOKENS } from "../server/harness.js";

let collector: Server;
let endpoint = "";
const bodies: string[] = [];

beforeAll(async () => {
  collector = createServer((rq, rs) => {
    let body = "";
    rq.on("data", (c) => {
      body += c;
    });
    rq.on("end", () => {
      if (rq.url === "/v1/traces") bodies.push(body);
      rs.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => collector.listen(0, "127.0.0.1", r));
  endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/v1/traces`;
});
afterAll(() => new Promise<void>((r) => collector.close(() => r())));

describe("OTLP export from the sidecar", () => {
  it("sends the execute_tool span with the configured service name to the collector", async () => {
    const sc = await startTestSidecar({
      config: { telemetry: { otlp: { endpoint, serviceName: "warden-test" } } },
    });
    const run = await sc.run("otlp");
    const r = await sc.call("/v1/decide", { token: TOKENS.agentA, body: echo("hi", { runId: run }) });
    expect(r.status).toBe(200);
    await sc.stop();
    const all = bodies.join("\n");
    expect(all).toContain("execute_tool echo_tool");
    expect(all).toContain("warden-test");
    expect(all).toContain("gen_ai.tool.name");
  });
});
