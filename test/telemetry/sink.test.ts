// The streaming sink over a real Gate's journal: a loopback collector that refuses a batch
// gets it again (at least once, nothing skipped), CEF lines reach it too, and a
// destination that is not loopback is refused at configuration time.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkDestination, TelemetrySink } from "../../src/telemetry/index.js";
import { makeGate, req } from "../gate/harness.js";

const ALLOW = `
rules:
  - { id: allow-get, name: get, priority: 100, match: { action: get }, decision: allow, reason: reads }
`;

let server: Server;
let url = "";
let failNext = 0;
const received: string[] = [];

beforeAll(async () => {
  server = createServer((rq, rs) => {
    let body = "";
    rq.on("data", (c) => {
      body += c;
    });
    rq.on("end", () => {
      if (failNext > 0) {
        failNext--;
        rs.writeHead(503).end();
        return;
      }
      received.push(...body.trim().split("\n"));
      rs.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ingest`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe("TelemetrySink to a loopback collector", () => {
  it("a refused batch is delivered again on the next flush, and nothing is skipped", async () => {
    received.length = 0;
    const h = await makeGate({ yaml: ALLOW });
    const sink = new TelemetrySink({ store: h.store, format: "ocsf", url, intervalMs: 60_000, afterSeq: 0 });
    await sink.start();
    for (let i = 0; i < 3; i++) await h.gate.evaluate(req({ runId: `run-${i}` }));
    failNext = 1;
    await expect(sink.flush()).rejects.toThrow(/503/);
    expect(received).toEqual([]);
    expect(await sink.flush()).toBe(3);
    await h.gate.evaluate(req({ runId: "run-9" }));
    await sink.stop();
    const events = received.map(
      (l) => JSON.parse(l) as { class_uid: number; metadata: { correlation_uid: string } },
    );
    expect(events.map((e) => e.metadata.correlation_uid)).toEqual(["run-0", "run-1", "run-2", "run-9"]);
    expect(new Set(events.map((e) => e.class_uid))).toEqual(new Set([6003]));
  });

  it("starts at the journal head by default and speaks CEF when asked", async () => {
    received.length = 0;
    const h = await makeGate({ yaml: ALLOW });
    await h.gate.evaluate(req({ runId: "before" }));
    const sink = new TelemetrySink({ store: h.store, format: "cef", url, intervalMs: 60_000 });
    await sink.start();
    await h.gate.evaluate(req({ runId: "after" }));
    await sink.stop();
    expect(received).toHaveLength(1);
    expect(received[0]).toMatch(/^CEF:0\|Warden\|Warden\|.*cs1=after/);
  });
});

describe("sink destinations", () => {
  it.each([
    [{ url: "http://collector.example.com/ingest" }, "a remote host"],
    [{ url: "http://10.0.0.5/ingest" }, "a private address"],
    [{ url: "file:///tmp/x" }, "a non-http scheme"],
    [{}, "no destination"],
    [{ file: "/tmp/a", url: "http://127.0.0.1/" }, "two destinations"],
  ])("%o is refused (%s)", (d, _why) => {
    expect(() => checkDestination(d)).toThrow(expect.objectContaining({ code: "ERR_SERVER_CONFIG_INVALID" }));
  });

  it("loopback destinations are accepted", () => {
    for (const u of ["http://127.0.0.1:4318/x", "http://localhost/x", "http://[::1]:9/x"])
      expect(() => checkDestination({ url: u })).not.toThrow();
  });
});
