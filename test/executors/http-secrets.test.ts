// Attacks on the secrets an HTTP contract substitutes into its request: a server
// that redirects them to another origin, and a server that echoes them back so
// they reach the agent, the evidence or an error message. All servers are real
// node:http listeners on loopback; "cross-origin" means another port, another
// host name or another scheme.
import { once } from "node:events";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  type HttpBinding,
  HttpExecutor,
  type HttpRequestSpec,
  type Resolver,
  rawOutputHash,
} from "../../src/executors/index.js";
import { MemoryJournal, mint } from "./helpers.js";

const SECRET = 'Sk-3xAmple/"va lue"+42';
const b64 = (s: string) => Buffer.from(s).toString("base64");

interface Received {
  method: string;
  host: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

let a: http.Server;
let b: http.Server;
let tcp: net.Server;
let portA = 0;
let portB = 0;
let portT = 0;
const atA: Received[] = [];
const atB: Received[] = [];
let tcpConnections = 0;

async function record(req: http.IncomingMessage, into: Received[]): Promise<Received> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const r = {
    method: req.method ?? "",
    host: req.headers.host ?? "",
    url: req.url ?? "",
    headers: req.headers,
    body: Buffer.concat(chunks).toString(),
  };
  into.push(r);
  return r;
}

async function handlerA(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const r = await record(req, atA);
  const u = new URL(r.url, "http://x");
  const token = String(req.headers["x-token"] ?? "");
  switch (u.pathname) {
    case "/redirect":
      res.writeHead(Number(u.searchParams.get("status") ?? "302"), {
        location: u.searchParams.get("to") ?? "/",
      });
      res.end();
      return;
    case "/redirect-with-key": // puts the query's key into the next hop's URL
      res.writeHead(302, {
        location: `${u.searchParams.get("to")}?k=${encodeURIComponent(u.searchParams.get("api_key") ?? "")}`,
      });
      res.end();
      return;
    case "/echo": // everything the server got, in every spelling it might use
      res.writeHead(200, { "content-type": "application/json", "x-echo": token, "set-cookie": `s=${token}` });
      res.end(
        JSON.stringify({
          headers: r.headers,
          body: r.body,
          url: r.url,
          basic: b64(`user:${token}`),
          b64url: Buffer.from(`xy${token}`).toString("base64url"),
          form: encodeURIComponent(token).replace(/%20/g, "+"),
          lowerHex: encodeURIComponent(token).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
        }),
      );
      return;
    case "/split": {
      // The secret arrives in two TCP writes, with a pause in between.
      res.writeHead(200, { "content-type": "text/plain" });
      const half = Math.floor(token.length / 2);
      res.write(`before ${token.slice(0, half)}`);
      setTimeout(() => res.end(`${token.slice(half)} after`), 30);
      return;
    }
    case "/bad-type":
      res.writeHead(200, { "content-type": `text/${token}` }).end("x");
      return;
    default:
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
  }
}

beforeAll(async () => {
  a = http.createServer((req, res) => void handlerA(req, res));
  b = http.createServer((req, res) => void record(req, atB).then(() => res.end("landed at B")));
  tcp = net.createServer((s) => {
    tcpConnections++;
    s.destroy();
  });
  for (const s of [a, b, tcp]) {
    s.listen(0, "127.0.0.1");
    await once(s, "listening");
  }
  portA = (a.address() as AddressInfo).port;
  portB = (b.address() as AddressInfo).port;
  portT = (tcp.address() as AddressInfo).port;
});

afterAll(() => {
  a.closeAllConnections();
  a.close();
  b.closeAllConnections();
  b.close();
  tcp.close();
});

beforeEach(() => {
  atA.length = 0;
  atB.length = 0;
  tcpConnections = 0;
});

const resolver: Resolver = async (host) => {
  if (host === "api.test" || host === "other.test") return [{ address: "127.0.0.1", family: 4 }];
  throw new Error(`ENOTFOUND ${host}`);
};

const A = () => `http://api.test:${portA}`;
const B = () => `http://127.0.0.1:${portB}`;

async function call(spec: Partial<HttpRequestSpec> & { url: string }, journal = new MemoryJournal()) {
  const binding: HttpBinding = {
    name: "fetch",
    version: "1.0.0",
    build: () => ({ method: "GET", secrets: [SECRET], ...spec }),
  };
  const ex = new HttpExecutor({ resolver, allowLoopback: true, maxResponseBytes: 64 * 1024 }, { journal });
  const r = await ex.execute(mint("fetch", {}), binding);
  return { r, journal };
}

const redirect = (status: number, to: string) =>
  `${A()}/redirect?status=${status}&to=${encodeURIComponent(to)}`;
const secretBody = JSON.stringify({ auth: SECRET, item: 1 });
const sawSecret = (rs: Received[]) =>
  rs.some(
    (x) => JSON.stringify(x).includes(SECRET) || JSON.stringify(x).includes(encodeURIComponent(SECRET)),
  );

describe("http executor: secrets and redirects", () => {
  it.each([307, 308])(
    "a cross-origin %i (another port) does not re-send a body_template secret",
    async (status) => {
      const { r } = await call({ method: "POST", url: redirect(status, `${B()}/steal`), body: secretBody });
      expect(atB).toEqual([]);
      expect(!r.ok && r.code).toBe("ERR_EXEC_REDIRECT_BLOCKED");
    },
  );

  it("a cross-origin 307 to another host name on the same port does not re-send the secret body", async () => {
    const { r } = await call({
      method: "POST",
      url: redirect(307, `http://other.test:${portA}/echo`),
      body: secretBody,
    });
    expect(atA.filter((x) => x.host.startsWith("other.test"))).toEqual([]);
    expect(!r.ok && r.code).toBe("ERR_EXEC_REDIRECT_BLOCKED");
  });

  it("a 308 to another scheme is refused before any connection is made", async () => {
    const { r } = await call({
      method: "PUT",
      url: redirect(308, `https://api.test:${portT}/x`),
      body: secretBody,
    });
    expect(!r.ok && r.code).toBe("ERR_EXEC_REDIRECT_BLOCKED");
    expect(tcpConnections).toBe(0);
  });

  it("a cross-origin 307 with a body that carries no secret is followed, like fetch", async () => {
    const { r } = await call({ method: "POST", url: redirect(307, `${B()}/in`), body: '{"n":1}' });
    expect(r.ok).toBe(true);
    expect(atB).toMatchObject([{ method: "POST", body: '{"n":1}' }]);
  });

  it.each([301, 302, 303])(
    "a cross-origin %i after POST arrives as a GET with no body and no credentials",
    async (status) => {
      const { r } = await call({
        method: "POST",
        url: redirect(status, `${B()}/in`),
        body: secretBody,
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${SECRET}`,
          cookie: `sid=${SECRET}`,
          "x-api-key": SECRET,
          "x-sig": b64(`user:${SECRET}`),
          "x-plain": "hello",
        },
      });
      expect(r.ok).toBe(true);
      expect(atB).toHaveLength(1);
      expect(atB[0]).toMatchObject({ method: "GET", body: "" });
      expect(atB[0]?.headers["content-type"]).toBeUndefined();
      expect(atB[0]?.headers["x-plain"]).toBe("hello");
      expect(sawSecret(atB)).toBe(false);
      expect(JSON.stringify(atB)).not.toContain(b64(`user:${SECRET}`));
    },
  );

  it("a cross-origin 301 after PUT keeps the method, so its secret body is refused", async () => {
    const { r } = await call({ method: "PUT", url: redirect(301, `${B()}/in`), body: secretBody });
    expect(atB).toEqual([]);
    expect(!r.ok && r.code).toBe("ERR_EXEC_REDIRECT_BLOCKED");
  });

  it("a same-origin 307 keeps the secret body and the credentials", async () => {
    const { r } = await call({
      method: "POST",
      url: redirect(307, "/land"),
      body: secretBody,
      headers: { authorization: `Bearer ${SECRET}` },
    });
    expect(r.ok).toBe(true);
    expect(atA.map((x) => x.url)).toEqual([expect.stringMatching(/^\/redirect/), "/land"]);
    expect(atA[1]).toMatchObject({ method: "POST", body: secretBody });
    expect(atA[1]?.headers.authorization).toBe(`Bearer ${SECRET}`);
  });

  it("a redirect chain that leaves the origin and comes back does not get the credentials back", async () => {
    const back = `${A()}/echo`;
    const viaOther = `http://other.test:${portA}/redirect?status=302&to=${encodeURIComponent(back)}`;
    const { r } = await call({
      url: redirect(302, viaOther),
      headers: { authorization: `Bearer ${SECRET}`, "x-token": SECRET },
    });
    expect(r.ok).toBe(true);
    expect(atA).toHaveLength(3);
    expect(sawSecret(atA.slice(1))).toBe(false);
  });

  it("a chain that reaches another origin with a 307 after a same-origin hop is refused there", async () => {
    const { r } = await call({
      method: "POST",
      url: redirect(302, `/redirect?status=307&to=${encodeURIComponent(`${B()}/x`)}`),
      body: '{"a":1}',
      headers: { "x-token": SECRET },
    });
    // 302 after POST turns into GET without a body; the secret header must still not reach B.
    expect(r.ok).toBe(true);
    expect(sawSecret(atB)).toBe(false);
  });

  it("a server that moves the query's secret into a cross-origin redirect URL is refused", async () => {
    const { r } = await call({
      url: `${A()}/redirect-with-key?api_key=${encodeURIComponent(SECRET)}&to=${encodeURIComponent(`${B()}/k`)}`,
    });
    expect(atB).toEqual([]);
    expect(!r.ok && r.code).toBe("ERR_EXEC_REDIRECT_BLOCKED");
  });
});

describe("http executor: echoed secrets are masked", () => {
  it("a server that echoes the secret in its body, in every common spelling, returns it masked", async () => {
    const { r, journal } = await call({
      method: "POST",
      url: `${A()}/echo?api_key=${encodeURIComponent(SECRET)}`,
      body: secretBody,
      headers: { authorization: `Bearer ${SECRET}`, "x-token": SECRET },
    });
    if (!r.ok) throw new Error(`${r.code} ${r.message}`);
    expect(atA[0]?.headers.authorization).toBe(`Bearer ${SECRET}`); // it was sent
    const text = r.output.body.toString();
    const echoed = JSON.parse(text);
    expect(echoed.basic).not.toBe(b64(`user:${SECRET}`));
    for (const form of [
      SECRET,
      encodeURIComponent(SECRET),
      encodeURIComponent(SECRET).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
      encodeURIComponent(SECRET).replace(/%20/g, "+"),
      JSON.stringify(SECRET).slice(1, -1),
      b64(`user:${SECRET}`),
      Buffer.from(`xy${SECRET}`).toString("base64url"),
    ]) {
      expect(text).not.toContain(form);
      expect(JSON.stringify(journal.events)).not.toContain(form);
    }
    expect(text).toContain("***");
  });

  it("a secret in the URL path or under an innocent query name is masked in every recorded URL", async () => {
    const { r } = await call({
      // Written raw, as a custom binding might: the URL parser re-encodes only some characters.
      url: `${A()}/echo/${SECRET.replace("/", "%2F")}?q=${SECRET}&${SECRET}=1`,
    });
    if (!r.ok) throw new Error(r.code);
    expect(decodeURIComponent(atA[0]?.url ?? "")).toContain(`q=${SECRET}`); // it was sent
    const recorded = JSON.stringify(r.evidence) + r.output.url;
    expect(recorded).not.toContain("Sk-3xAmple");
  });

  it("the evidence hashes what the agent got (masked) and counts the masked occurrences", async () => {
    const { r, journal } = await call({ url: `${A()}/echo`, headers: { "x-token": SECRET } });
    if (!r.ok) throw new Error(r.code);
    expect(r.evidence.output_hash).toBe(rawOutputHash(r.output.body));
    expect(r.evidence.output_masked).toBeGreaterThan(0);
    expect(r.response.outputs.payload_hash).toBe(r.evidence.output_hash);
    expect(journal.ofType("warden.executor.evidence")[0]?.body.output_hash).toBe(r.evidence.output_hash);
  });

  it("the recorded request body hash is of the masked body, so it cannot confirm a guessed secret", async () => {
    const { r } = await call({ method: "POST", url: `${A()}/ok`, body: secretBody });
    if (!r.ok) throw new Error(r.code);
    const inv = r.evidence.invocation;
    expect(inv?.kind === "http" && inv.body_hash).toBe(
      rawOutputHash(Buffer.from(secretBody.replace(JSON.stringify(SECRET).slice(1, -1), "***"))),
    );
    expect(inv?.kind === "http" && inv.body_hash).not.toBe(rawOutputHash(Buffer.from(secretBody)));
  });

  it("a server that echoes the secret in response headers gets them masked", async () => {
    const { r } = await call({ url: `${A()}/echo`, headers: { "x-token": SECRET } });
    if (!r.ok) throw new Error(r.code);
    expect(r.output.headers["x-echo"]).toBe("***");
    expect(r.output.headers["set-cookie"]).toBe("***");
    expect(JSON.stringify(r.output.headers)).not.toContain(SECRET);
  });

  it("a secret split across response chunks is still masked", async () => {
    const { r } = await call({ url: `${A()}/split`, headers: { "x-token": SECRET } });
    if (!r.ok) throw new Error(r.code);
    expect(r.output.body.toString()).toBe("before *** after");
  });

  it("a secret the server puts into an error message does not reach the caller", async () => {
    const { r, journal } = await call({
      url: `${A()}/bad-type`,
      headers: { "x-token": "plain-token-value" },
      secrets: ["plain-token-value"],
      contentTypes: ["application/json"],
    });
    expect(!r.ok && r.code).toBe("ERR_EXEC_CONTENT_TYPE");
    expect(JSON.stringify(r)).not.toContain("plain-token-value");
    expect(JSON.stringify(journal.events)).not.toContain("plain-token-value");
  });
});
