// A loopback canary for attack tests: an HTTP listener that records every request body it
// receives. The harm a test rules out is "the canary received it".
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface Canary {
  /** http://127.0.0.1:PORT/ */
  url: string;
  /** Every request body received, in order. */
  received: string[];
  close(): Promise<void>;
}

export async function startCanary(): Promise<Canary> {
  const received: string[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString("utf8");
    });
    req.on("end", () => {
      received.push(body);
      res.end("ok");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    received,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
