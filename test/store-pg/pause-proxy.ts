// A loopback TCP proxy in front of PostgreSQL that freezes one replica's connection at an
// exact point of its protocol traffic: the first client message matching a pattern is held
// (`before`) or forwarded (`after`), and from then on nothing more passes on that connection
// in either direction until `thaw()`. With the replica SIGSTOPped at that moment, it is a
// replica paused exactly there (mid-commit, or holding what it just took), reproducibly.
import net from "node:net";

export interface PauseProxy {
  /** postgres:// URL through the proxy (same database, user and password as `target`). */
  url: string;
  /**
   * Arms the freeze; resolves once a connection froze on a message matching `pattern`
   * (`cut`: that connection is dropped instead, the message never reaching the server).
   */
  freezeOn(pattern: RegExp, when: "before" | "after" | "cut"): Promise<void>;
  /** Releases every held message, in order, and lets traffic flow again. */
  thaw(): void;
  /** Drops every frozen connection, its held messages with it (a partition while paused). */
  cutFrozen(): void;
  close(): Promise<void>;
}

interface Pipe {
  frozen: boolean;
  toServer: Buffer[];
  toClient: Buffer[];
  client: net.Socket;
  server: net.Socket;
}

export async function startPauseProxy(target: string): Promise<PauseProxy> {
  const t = new URL(target);
  const pipes = new Set<Pipe>();
  let armed: { pattern: RegExp; when: "before" | "after" | "cut"; hit: () => void } | undefined;
  const srv = net.createServer((client) => {
    const server = net.connect(Number(t.port), t.hostname);
    const p: Pipe = { frozen: false, toServer: [], toClient: [], client, server };
    pipes.add(p);
    client.on("data", (b: Buffer) => {
      if (p.frozen) return void p.toServer.push(b);
      const a = armed;
      if (a?.pattern.test(b.toString("latin1"))) {
        armed = undefined;
        if (a.when === "cut") {
          client.destroy();
          server.destroy();
          a.hit();
          return;
        }
        p.frozen = true;
        if (a.when === "before") p.toServer.push(b);
        else server.write(b);
        a.hit();
        return;
      }
      server.write(b);
    });
    server.on("data", (b: Buffer) => {
      if (p.frozen) p.toClient.push(b);
      else client.write(b);
    });
    const end = () => {
      client.destroy();
      server.destroy();
      pipes.delete(p);
    };
    client.on("error", end).on("close", end);
    server.on("error", end).on("close", end);
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as net.AddressInfo).port;
  const u = new URL(target);
  u.hostname = "127.0.0.1";
  u.port = String(port);
  return {
    url: u.toString(),
    freezeOn: (pattern, when) =>
      new Promise<void>((hit) => {
        armed = { pattern, when, hit };
      }),
    thaw() {
      for (const p of pipes) {
        if (!p.frozen) continue;
        p.frozen = false;
        for (const b of p.toServer.splice(0)) p.server.write(b);
        for (const b of p.toClient.splice(0)) p.client.write(b);
      }
    },
    cutFrozen() {
      for (const p of pipes) {
        if (!p.frozen) continue;
        p.toServer.length = 0;
        p.toClient.length = 0;
        p.client.destroy();
        p.server.destroy();
      }
    },
    close: () =>
      new Promise<void>((r) => {
        for (const p of pipes) {
          p.client.destroy();
          p.server.destroy();
        }
        srv.close(() => r());
      }),
  };
}
