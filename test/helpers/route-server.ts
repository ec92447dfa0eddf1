// A loopback HTTP server that answers fixed bodies by path (404 otherwise), for tests
// that point a client at documents such as /.well-known/schemapin.json.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface RouteServer {
  /** http://127.0.0.1:PORT */
  base: string;
  /** Path (with query) → body; change it between requests as a test needs. */
  routes: Map<string, string>;
  close(): Promise<void>;
}

export async function startRouteServer(): Promise<RouteServer> {
  const routes = new Map<string, string>();
  const server = createServer((req, res) => {
    const body = routes.get(req.url ?? "");
    res.statusCode = body === undefined ? 404 : 200;
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    routes,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
