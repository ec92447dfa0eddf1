// A loopback webhook receiver for the notification tests, and a free port for a sidecar whose
// public URL must be known before it starts (approval links point at it).
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface Receiver {
  url: string;
  notices: { headers: IncomingMessage["headers"]; body: string }[];
  /** While true, requests are recorded and never answered (a hanging endpoint). */
  hang: boolean;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const notices: Receiver["notices"] = [];
  let server: Server;
  const r: Receiver = {
    url: "",
    notices,
    hang: false,
    async close() {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString("utf8");
    });
    req.on("end", () => {
      notices.push({ headers: req.headers, body });
      if (!r.hang) res.end("ok");
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return r;
}

export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
  const port = (probe.address() as AddressInfo).port;
  await new Promise((r) => probe.close(r));
  return port;
}
