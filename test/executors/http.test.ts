import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToolResponseEnvelopeSchema } from "../../src/contracts/index.js";
import {
  EvidenceEnvelope,
  type HttpBinding,
  HttpExecutor,
  type HttpExecutorOptions,
  type HttpRequestSpec,
  type Resolver,
  rawOutputHash,
} from "../../src/executors/index.js";
import { MemoryJournal, mint } from "./helpers.js";

interface Seen {
  url: string;
  host: string | undefined;
  authorization: string | undefined;
}

let server: http.Server;
let evil: http.Server;
let port = 0;
const seen: Seen[] = [];
const evilSeen: string[] = [];

function handler(req: http.IncomingMessage, res: http.ServerResponse): void {
  seen.push({ url: req.url ?? "", host: req.headers.host, authorization: req.headers.authorization });
  const u = new URL(req.url ?? "/", "http://x");
  const to = u.searchParams.get("to");
  switch (u.pathname) {
    case "/ok":
      res.writeHead(200, { "content-type": "application/json" }).end('{"hello":"world"}');
      return;
    case "/headers":
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(req.headers));
      return;
    case "/redirect":
      res.writeHead(Number(u.searchParams.get("status") ?? "302"), { location: to ?? "/ok" }).end();
      return;
    case "/loop":
      res.writeHead(302, { location: "/loop" }).end();
      return;
    case "/big":
      res
        .writeHead(200, { "content-type": "text/plain", "content-length": String(5000) })
        .end("x".repeat(5000));
      return;
    case "/big-chunked":
      res.writeHead(200, { "content-type": "text/plain" });
      for (let i = 0; i < 10; i++) res.write("y".repeat(1000));
      res.end();
      return;
    case "/html":
      res.writeHead(200, { "content-type": "text/html" }).end("<p>hi</p>");
      return;
    case "/fail":
      res.writeHead(500, { "content-type": "text/plain" }).end("boom");
      return;
    case "/slow":
      setTimeout(() => res.writeHead(200).end("late"), 5000).unref();
      return;
    default:
      res.writeHead(404).end();
  }
}

beforeAll(async () => {
  server = http.createServer(handler);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  port = (server.address() as AddressInfo).port;
  // Same port, different loopback address: where a rebinding attack would land.
  evil = http.createServer((req, res) => {
    evilSeen.push(req.url ?? "");
    res.end("evil");
  });
  evil.listen(port, "127.0.0.2");
  await once(evil, "listening");
});

afterAll(() => {
  server.closeAllConnections();
  server.close();
  evil.closeAllConnections();
  evil.close();
});

function mapResolver(map: Record<string, string[]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const r = (async (host: string) => {
    calls.push(host);
    const a = map[host];
    if (a === undefined) throw new Error(`ENOTFOUND ${host}`);
    return a.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }) as const);
  }) as Resolver & { calls: string[] };
  r.calls = calls;
  return r;
}

function binding(
  spec: Partial<HttpRequestSpec> & { url: string },
  extra: Partial<HttpBinding> = {},
): HttpBinding {
  return {
    name: "fetch",
    version: "1.0.0",
    build: (p) => ({ method: "GET", ...spec, url: spec.url.replace("{path}", String(p.path ?? "")) }),
    ...extra,
  };
}

function exec(options: HttpExecutorOptions, journal?: MemoryJournal): HttpExecutor {
  return new HttpExecutor(
    { maxResponseBytes: 4096, ...options },
    journal ? { journal, agentId: "agent-1" } : {},
  );
}

const resolver = () => mapResolver({ "api.test": ["127.0.0.1"], "internal.test": ["10.0.0.7"] });

describe("http executor: success", () => {
  it("fetches through a pinned address and produces schema-valid evidence", async () => {
    const journal = new MemoryJournal();
    const r = await exec({ resolver: resolver(), allowLoopback: true }, journal).execute(
      mint("fetch", { path: "ok" }),
      binding({ url: `http://api.test:${port}/{path}` }),
      { userId: "alice" },
    );
    if (!r.ok) throw new Error(r.code);
    expect(r.output.status).toBe(200);
    expect(r.output.body.toString()).toBe('{"hello":"world"}');
    expect(EvidenceEnvelope.parse(r.evidence)).toEqual(r.evidence);
    expect(r.evidence.output_hash).toBe(rawOutputHash(Buffer.from('{"hello":"world"}')));
    expect(r.evidence.exit.http_status).toBe(200);
    expect(r.evidence.identity).toEqual({
      principal_id: "agent:tester",
      agent_id: "agent-1",
      user_id: "alice",
    });
    expect(r.evidence.parameters).toEqual({ path: "ok" });
    expect(r.evidence.invocation).toMatchObject({
      kind: "http",
      method: "GET",
      hops: [{ address: "127.0.0.1", status: 200 }],
    });
    expect(ToolResponseEnvelopeSchema.parse(r.response)).toEqual(r.response);
    expect(r.response.outputs.payload_hash).toBe(r.evidence.output_hash);
    expect(r.response.tool.status).toBe("success");
    expect(r.taint.map((t) => t.source)).toEqual(["web"]);
    expect(journal.events.map((e) => e.type)).toEqual(["warden.executor.evidence", "dare.tool.response"]);
    expect(journal.events[0]?.run_id).toBe("run-test-1");
  });

  it("keeps the original host name in the Host header while connecting to the pinned address", async () => {
    const r = await exec({ resolver: resolver(), allowLoopback: true }).execute(
      mint("fetch", { path: "headers" }),
      binding({ url: `http://api.test:${port}/{path}` }),
    );
    if (!r.ok) throw new Error(r.code);
    expect(JSON.parse(r.output.body.toString()).host).toBe(`api.test:${port}`);
  });

  it("masks secrets in the recorded invocation and in the echoed output, but sends them", async () => {
    const secret = "s3cr3t-value-123";
    seen.length = 0;
    const r = await exec({ resolver: resolver(), allowLoopback: true }).execute(
      mint("fetch", { path: "headers" }),
      binding({
        url: `http://api.test:${port}/{path}?api_key=${secret}&q=1`,
        headers: { authorization: `Bearer ${secret}`, "x-custom": `k=${secret}` },
        secrets: [secret],
      }),
    );
    if (!r.ok) throw new Error(r.code);
    expect(seen.at(-1)?.authorization).toBe(`Bearer ${secret}`);
    expect(JSON.parse(r.output.body.toString()).authorization).toBe("Bearer ***");
    const recorded = JSON.stringify(r.evidence);
    expect(recorded).not.toContain(secret);
    expect(r.evidence.invocation).toMatchObject({
      headers: { authorization: "***", "x-custom": "k=***" },
    });
  });

  it("follows a same-origin redirect and records every hop", async () => {
    const r = await exec({ resolver: resolver(), allowLoopback: true }).execute(
      mint("fetch", { path: "redirect?to=/ok" }),
      binding({ url: `http://api.test:${port}/{path}` }),
    );
    if (!r.ok) throw new Error(r.code);
    expect(r.output.body.toString()).toBe('{"hello":"world"}');
    const inv = r.evidence.invocation;
    expect(inv?.kind === "http" && inv.hops.map((h) => h.status)).toEqual([302, 200]);
  });

  it("accepts declared content types and reports a tool failure for an error status", async () => {
    const ok = await exec({ resolver: resolver(), allowLoopback: true }).execute(
      mint("fetch", { path: "ok" }),
      binding({ url: `http://api.test:${port}/{path}`, contentTypes: ["application/*"] }),
    );
    expect(ok.ok).toBe(true);
    const bad = await exec({ resolver: resolver(), allowLoopback: true }).execute(
      mint("fetch", { path: "fail" }),
      binding({ url: `http://api.test:${port}/{path}` }),
    );
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(bad.code).toBe("ERR_EXEC_TOOL_FAILED");
    expect(bad.evidence?.exit.http_status).toBe(500);
    expect(bad.evidence?.output_hash).toBe(rawOutputHash(Buffer.from("boom")));
    expect(bad.response?.tool).toMatchObject({ status: "error", error_code: "ERR_EXEC_TOOL_FAILED" });
  });
});

describe("http executor: SSRF attacks", () => {
  const spellings = [
    "127.0.0.1",
    "2130706433",
    "0x7f.1",
    "0x7f000001",
    "017700000001",
    "127.1",
    "127.0.0.1.",
    "[::1]",
    "[::ffff:127.0.0.1]",
    "[::ffff:7f00:1]",
    "[64:ff9b::7f00:1]",
    "[2002:7f00:1::]",
    "169.254.169.254",
    "[fd00:ec2::254]",
    "[fe80::1]",
    "[fc00::1]",
    "100.64.0.1",
    "10.0.0.1",
    "0.0.0.0",
    "224.0.0.1",
  ];
  it.each(spellings)("refuses http://%s/ without sending a packet", async (host) => {
    const before = seen.length;
    const r = await exec({ resolver: resolver() }).execute(
      mint("fetch", {}),
      binding({ url: `http://${host}:${port}/ok` }),
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.code).toBe("ERR_EXEC_SSRF_BLOCKED");
    expect(r.evidence?.status).toBe("rejected");
    expect(r.response?.tool.status).toBe("denied");
    expect(seen.length).toBe(before);
  });

  it("refuses a name that resolves to a private address", async () => {
    const r = await exec({ resolver: resolver(), allowLoopback: true }).execute(
      mint("fetch", {}),
      binding({ url: `http://internal.test:${port}/ok` }),
    );
    expect(!r.ok && r.code).toBe("ERR_EXEC_SSRF_BLOCKED");
  });

  it("refuses a trailing-dot name that resolves to loopback", async () => {
    const res = mapResolver({ localhost: ["127.0.0.1"] });
    const r = await exec({ resolver: res }).execute(
      mint("fetch", {}),
      binding({ url: `http://localhost.:${port}/ok` }),
    );
    expect(!r.ok && r.code).toBe("ERR_EXEC_SSRF_BLOCKED");
    expect(res.calls).toEqual(["localhost"]);
  });

  it("refuses when any answer is blocked, even if the first is public", async () => {
    const res = mapResolver({ "mixed.test": ["93.184.216.34", "127.0.0.1"] });
    const before = seen.length;
    const r = await exec({ resolver: res }).execute(
      mint("fetch", {}),
      binding({ url: `http://mixed.test:${port}/ok` }),
    );
    expect(!r.ok && r.code).toBe("ERR_EXEC_SSRF_BLOCKED");
    expect(seen.length).toBe(before);
  });

  it("DNS rebinding: connects to the pinned first answer, never to a later one", async () => {
    let n = 0;
    const calls: string[] = [];
    const rebinding: Resolver = async (host) => {
      calls.push(host);
      n++;
      return [{ address: n === 1 ? "127.0.0.1" : "127.0.0.2", family: 4 }];
    };
    const before = evilSeen.length;
    const r = await exec({ resolver: rebinding, allowLoopback: true }).execute(
      mint("fetch", {}),
      binding({ url: `http://rebind.test:${port}/ok` }),
    );
    if (!r.ok) throw new Error(r.code);
    expect(r.output.body.toString()).toBe('{"hello":"world"}');
    expect(calls).toEqual(["rebind.test"]);
    expect(evilSeen.length).toBe(before);
  });

  it("DNS rebinding across a redirect: the next hop is resolved and checked again", async () => {
    let n = 0;
    const rebinding: Resolver = async () => {
      n++;
      return [{ address: n === 1 ? "127.0.0.1" : "10.0.0.1", family: 4 }];
    };
    const r = await exec({ resolver: rebinding, allowLoopback: true }).execute(
      mint("fetch", { path: "redirect?to=/ok" }),
      binding({ url: `http://rebind.test:${port}/{path}` }),
    );
    expect(!r.ok && r.code).toBe("ERR_EXEC_SSRF_BLOCKED");
    expect(n).toBe(2);
  });

  it.each([
    ["the metadata service", "http://169.254.169.254/latest/meta-data/"],
    ["the IPv6 metadata service", "http://[fd00:ec2::254]/latest/meta-data/"],
    ["a decimal private address", "http://167772161/"],
    ["a hex private address", "http://0x0a.1/"],
    ["an IPv4-mapped IPv6 private address", "http://[::ffff:10.0.0.1]/"],
    ["a name that resolves privately", "http://internal.test/"],
  ])("refuses a redirect to %s after a permitted first hop", async (_label, target) => {
    const before = seen.length;
    const r = await exec({ resolver: resolver(), allowLoopback: true }).execute(
      mint("fetch", { path: `redirect?to=${encodeURIComponent(target)}` }),
      binding({ url: `http://api.test:${port}/{path}` }),
    );
    expect(!r.ok && r.code).toBe("ERR_EXEC_SSRF_BLOCKED");
    expect(seen.length).toBe(before + 1);
    const inv = r.ok ? undefined : r.evidence?.invocation;
    expect(inv?.kind === "http" && inv.hops.length).toBe(2);
  });

  it("stops after the redirect limit", async () => {
    const r = await exec({ resolver: resolver(), allowLoopback: true, maxRedirects: 3 }).execute(
      mint("fetch", { path: "loop" }),
      binding({ url: `http://api.test:${port}/{path}` }),
    );
    expect(!r.ok && r.code).toBe("ERR_EXEC_REDIRECT_LIMIT");
  });

  it.each(["file:///etc/passwd", "gopher://api.test/x", "ftp://api.test/"])(
    "refuses a redirect to the %s scheme",
    async (target) => {
      const r = await exec({ resolver: resolver(), allowLoopback: true }).execute(
        mint("fetch", { path: `redirect?to=${encodeURIComponent(target)}` }),
        binding({ url: `http://api.test:${port}/{path}` }),
      );
      expect(!r.ok && r.code).toBe("ERR_EXEC_URL_INVALID");
    },
  );

  it("drops credentials on a cross-origin redirect", async () => {
    const res = mapResolver({ "api.test": ["127.0.0.1"], "other.test": ["127.0.0.1"] });
    const r = await exec({ resolver: res, allowLoopback: true }).execute(
      mint("fetch", { path: `redirect?to=${encodeURIComponent(`http://other.test:${port}/headers`)}` }),
      binding({
        url: `http://api.test:${port}/{path}`,
        headers: { authorization: "Bearer tok", cookie: "a=b" },
      }),
    );
    if (!r.ok) throw new Error(r.code);
    const echoed = JSON.parse(r.output.body.toString());
    expect(echoed.host).toBe(`other.test:${port}`);
    expect(echoed.authorization).toBeUndefined();
    expect(echoed.cookie).toBeUndefined();
  });

  it("refuses URLs with embedded credentials", async () => {
    const r = await exec({ resolver: resolver(), allowLoopback: true }).execute(
      mint("fetch", {}),
      binding({ url: `http://user:pw@api.test:${port}/ok` }),
    );
    expect(!r.ok && r.code).toBe("ERR_EXEC_URL_INVALID");
  });

  it("enforces the contract's CIDR scope on every resolved address", async () => {
    const res = mapResolver({ "api.test": ["127.0.0.1"], "other.test": ["127.0.0.2"] });
    const inside = await exec({ resolver: res, allowLoopback: true }).execute(
      mint("fetch", {}),
      binding({ url: `http://api.test:${port}/ok` }, { allowedCidrs: ["127.0.0.1/32"] }),
    );
    expect(inside.ok).toBe(true);
    const outside = await exec({ resolver: res, allowLoopback: true }).execute(
      mint("fetch", {}),
      binding({ url: `http://other.test:${port}/ok` }, { allowedCidrs: ["127.0.0.1/32"] }),
    );
    expect(!outside.ok && outside.code).toBe("ERR_EXEC_HOST_NOT_ALLOWED");
    const denied = await exec({ resolver: res, allowLoopback: true }).execute(
      mint("fetch", {}),
      binding({ url: `http://api.test:${port}/ok` }, { deniedCidrs: ["127.0.0.0/8"] }),
    );
    expect(!denied.ok && denied.code).toBe("ERR_EXEC_HOST_NOT_ALLOWED");
    const redirected = await exec({ resolver: res, allowLoopback: true }).execute(
      mint("fetch", { path: `redirect?to=${encodeURIComponent(`http://other.test:${port}/ok`)}` }),
      binding({ url: `http://api.test:${port}/{path}` }, { allowedCidrs: ["127.0.0.1"] }),
    );
    expect(!redirected.ok && redirected.code).toBe("ERR_EXEC_HOST_NOT_ALLOWED");
  });

  it("enforces the contract and the deployment host allow-lists", async () => {
    const res = mapResolver({ "api.test": ["127.0.0.1"], "other.test": ["127.0.0.1"] });
    const contractOnly = await exec({ resolver: res, allowLoopback: true }).execute(
      mint("fetch", {}),
      binding({ url: `http://other.test:${port}/ok` }, { allowedHosts: ["api.test"] }),
    );
    expect(!contractOnly.ok && contractOnly.code).toBe("ERR_EXEC_HOST_NOT_ALLOWED");
    const deployment = await exec({
      resolver: res,
      allowLoopback: true,
      allowedHosts: ["*.example.com"],
    }).execute(
      mint("fetch", {}),
      binding({ url: `http://api.test:${port}/ok` }, { allowedHosts: ["api.test"] }),
    );
    expect(!deployment.ok && deployment.code).toBe("ERR_EXEC_HOST_NOT_ALLOWED");
    const denied = await exec({ resolver: res, allowLoopback: true, deniedHosts: ["api.test"] }).execute(
      mint("fetch", {}),
      binding({ url: `http://API.test.:${port}/ok` }),
    );
    expect(!denied.ok && denied.code).toBe("ERR_EXEC_HOST_NOT_ALLOWED");
    const redirected = await exec({ resolver: res, allowLoopback: true }).execute(
      mint("fetch", { path: `redirect?to=${encodeURIComponent(`http://other.test:${port}/ok`)}` }),
      binding({ url: `http://api.test:${port}/{path}` }, { allowedHosts: ["api.test"] }),
    );
    expect(!redirected.ok && redirected.code).toBe("ERR_EXEC_HOST_NOT_ALLOWED");
  });

  it.each(["big", "big-chunked"])("caps the response size (%s)", async (path) => {
    const r = await exec({ resolver: resolver(), allowLoopback: true }).execute(
      mint("fetch", { path }),
      binding({ url: `http://api.test:${port}/{path}` }),
    );
    expect(!r.ok && r.code).toBe("ERR_EXEC_OUTPUT_TOO_LARGE");
  });

  it("refuses an undeclared content type", async () => {
    const r = await exec({ resolver: resolver(), allowLoopback: true }).execute(
      mint("fetch", { path: "html" }),
      binding({ url: `http://api.test:${port}/{path}`, contentTypes: ["application/json"] }),
    );
    expect(!r.ok && r.code).toBe("ERR_EXEC_CONTENT_TYPE");
  });

  it("times out and can be cancelled", async () => {
    const slow = await exec({ resolver: resolver(), allowLoopback: true }).execute(
      mint("fetch", { path: "slow" }),
      binding({ url: `http://api.test:${port}/{path}` }),
      { timeoutMs: 150 },
    );
    expect(!slow.ok && slow.code).toBe("ERR_EXEC_TIMEOUT");
    expect(!slow.ok && slow.response?.tool.status).toBe("timeout");
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const cancelled = await exec({ resolver: resolver(), allowLoopback: true }).execute(
      mint("fetch", { path: "slow" }),
      binding({ url: `http://api.test:${port}/{path}` }),
      { signal: ac.signal },
    );
    expect(!cancelled.ok && cancelled.code).toBe("ERR_EXEC_CANCELLED");
  });

  it("reports an unresolvable name", async () => {
    const r = await exec({ resolver: resolver() }).execute(
      mint("fetch", {}),
      binding({ url: `http://nowhere.test:${port}/ok` }),
    );
    expect(!r.ok && r.code).toBe("ERR_EXEC_DNS");
  });

  it("rejects a bad configuration", () => {
    expect(() => new HttpExecutor({ maxRedirects: -1 })).toThrowError(
      expect.objectContaining({ code: "ERR_EXEC_CONFIG_INVALID" }),
    );
  });
});
