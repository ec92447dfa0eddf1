// The egress proxy alone (contain-proxy.ts), over its Unix socket with raw HTTP: CONNECT to
// a listed host:port tunnels, anything unlisted is refused (403) and recorded, IP literals
// and names resolving to internal addresses are refused unless listed exactly, malformed
// and oversized requests get 400, and the journal file is bounded.
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { connect, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type EgressProxy,
  isInternalAddress,
  judgeDestination,
  startEgressProxy,
} from "../../src/hooks/contain-proxy.js";

const dir = mkdtempSync(join(tmpdir(), "warden-proxy-test-"));
let echo: Server;
let echoPort = 0;
let web: ReturnType<typeof createHttpServer>;
let webPort = 0;
let proxy: EgressProxy;
const socket = join(dir, "p.sock");
const log = join(dir, "egress.part");

const portOf = (s: Server) => {
  const a = s.address();
  return typeof a === "object" && a !== null ? a.port : 0;
};

beforeAll(async () => {
  echo = createServer((s) => s.pipe(s));
  await new Promise<void>((r) => echo.listen(0, "127.0.0.1", () => r()));
  echoPort = portOf(echo);
  web = createHttpServer((q, r) => r.end(`web ${q.method} ${q.url}`));
  await new Promise<void>((r) => web.listen(0, "127.0.0.1", () => r()));
  webPort = portOf(web as unknown as Server);
  // `rebind.evil.test` resolves to loopback: a wildcard entry never reaches an internal address.
  const lookup = ((
    _h: string,
    _o: unknown,
    cb: (e: null, a: { address: string; family: number }[]) => void,
  ) => cb(null, [{ address: "127.0.0.1", family: 4 }])) as unknown as typeof import("node:dns").lookup;
  proxy = await startEgressProxy({
    socket,
    egress: ["registry.npmjs.org", `127.0.0.1:${echoPort}`, `127.0.0.1:${webPort}`, "*.evil.test"],
    log,
    lookup,
  });
});
afterAll(async () => {
  await proxy.close();
  echo.close();
  web.close();
});

/** Sends raw bytes to the proxy; the first `reply` bytes it answers (or all until it closes). */
function raw(text: string, then?: string): Promise<string> {
  return new Promise((resolve) => {
    const c = connect(socket);
    let got = "";
    c.on("data", (d) => {
      got += d;
      if (then !== undefined && got.includes("\r\n\r\n") && got.startsWith("HTTP/1.1 200")) {
        if (!got.includes(then)) c.write(then);
        else c.end();
      }
    });
    c.on("close", () => resolve(got));
    c.on("error", () => resolve(got));
    c.write(text);
  });
}

describe("egress proxy", () => {
  it("refuses CONNECT to a host not on the allowlist (403) and records it", async () => {
    const r = await raw("CONNECT attacker.example:443 HTTP/1.1\r\nHost: attacker.example:443\r\n\r\n");
    expect(r).toMatch(/^HTTP\/1\.1 403/);
    expect(proxy.records).toContainEqual(
      expect.objectContaining({ host: "attacker.example", port: 443, method: "CONNECT", allowed: false }),
    );
  });

  it("tunnels CONNECT to a listed host:port", async () => {
    const r = await raw(`CONNECT 127.0.0.1:${echoPort} HTTP/1.1\r\n\r\n`, "ping-through-tunnel");
    expect(r).toMatch(/^HTTP\/1\.1 200/);
    expect(r).toContain("ping-through-tunnel");
  });

  it("forwards plain HTTP with an absolute URI to a listed host:port", async () => {
    const r = await raw(
      `GET http://127.0.0.1:${webPort}/x?y=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
    );
    expect(r).toMatch(/^HTTP\/1\.1 200/);
    expect(r).toContain("web GET /x?y=1");
  });

  it("refuses IP literals not listed exactly, even private or loopback ones", async () => {
    for (const target of ["10.0.0.1:443", "127.0.0.1:22", "[::1]:443", "169.254.169.254:80"]) {
      expect(await raw(`CONNECT ${target} HTTP/1.1\r\n\r\n`), target).toMatch(/^HTTP\/1\.1 403/);
    }
    expect(judgeDestination(["registry.npmjs.org"], "10.0.0.1", 443)).toMatchObject({ allowed: false });
  });

  it("refuses a wildcard-listed name that resolves to an internal address (DNS rebinding)", async () => {
    const r = await raw("CONNECT rebind.evil.test:443 HTTP/1.1\r\n\r\n");
    expect(r).toMatch(/^HTTP\/1\.1 502/);
    expect(r).toContain("internal address");
  });

  it("refuses other ports of a listed host", () => {
    expect(judgeDestination(["registry.npmjs.org"], "registry.npmjs.org", 22)).toMatchObject({
      allowed: false,
    });
    expect(judgeDestination(["registry.npmjs.org"], "registry.npmjs.org", 443)).toEqual({ allowed: true });
  });

  it("answers malformed requests, relative URIs and bad CONNECT targets with 400/403", async () => {
    expect(await raw("GARBAGE\r\n\r\n")).toMatch(/^HTTP\/1\.1 400/);
    expect(await raw("GET / HTTP/1.1\r\nHost: x\r\n\r\n")).toMatch(/^HTTP\/1\.1 400/);
    expect(await raw("CONNECT not-a-target HTTP/1.1\r\n\r\n")).toMatch(/^HTTP\/1\.1 403/);
    expect(await raw("CONNECT a b:443 HTTP/1.1\r\n\r\n")).toMatch(/^HTTP\/1\.1 (400|403)/);
  });

  it("refuses oversized headers", async () => {
    const big = `GET http://127.0.0.1:${webPort}/ HTTP/1.1\r\nX-Big: ${"a".repeat(64 * 1024)}\r\n\r\n`;
    expect(await raw(big)).toMatch(/^HTTP\/1\.1 (400|431)/);
  });

  it("journals every destination as a fsync'd JSON line", () => {
    const lines = readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.some((l) => l.host === "attacker.example" && l.allowed === false)).toBe(true);
    expect(lines.some((l) => l.port === echoPort && l.allowed === true)).toBe(true);
  });

  it("bounds the journal: after maxRecords one `truncated` line, then nothing", async () => {
    const s = join(dir, "small.sock");
    const small = join(dir, "small.part");
    const p = await startEgressProxy({ socket: s, egress: [], log: small, maxRecords: 2 });
    for (let i = 0; i < 5; i++) {
      await new Promise<void>((resolve) => {
        const c = connect(s, () => c.write(`CONNECT h${i}.example:443 HTTP/1.1\r\n\r\n`));
        c.on("close", () => resolve());
        c.resume();
      });
    }
    await p.close();
    const lines = readFileSync(small, "utf8").trim().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[2]).toContain("(truncated)");
  });

  it("knows internal addresses", () => {
    for (const a of [
      "127.0.0.1",
      "10.1.2.3",
      "172.16.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "::1",
      "fd00::1",
      "fe80::1",
      "::ffff:127.0.0.1",
      "0.0.0.0",
    ])
      expect(isInternalAddress(a), a).toBe(true);
    for (const a of ["104.16.0.1", "8.8.8.8", "2606:4700::1"]) expect(isInternalAddress(a), a).toBe(false);
  });
});
