// The live approval queue: server-sent events telling a signed-in approver's page that the
// set of pending approvals changed (the page then reloads the queue fragment). One shared
// ticker compares the pending ids (in distributed mode also every replica's deferred
// actions, re-read every second); streams are bounded (`maxStreams`), each ends when its
// session does, and all end when the server closes. An event carries a counter only.
import type { FastifyReply } from "fastify";
import { ConsoleError } from "../contracts/index.js";
import type { ConsoleState } from "./context.js";
import { SECURITY_HEADERS } from "./security.js";
import type { ConsoleSession } from "./sessions.js";

const TICK_MS = 250;
const HEARTBEAT_TICKS = 60;
/** Every replica's deferred actions (distributed mode: a query) are re-read every 4 ticks. */
const SHARED_TICKS = 4;

interface Stream {
  readonly sessionId: string;
  readonly reply: FastifyReply;
}

export interface LiveQueue {
  attach(s: ConsoleSession, reply: FastifyReply): void;
  close(): void;
}

/** This replica's pending step-ups and deferred actions, as one comparable string. */
function pendingIds(st: ConsoleState): string {
  const r = st.o.runtime;
  return [...r.approvals.pending().map((p) => p.id), ...r.gate.deferQueue.list().map((d) => d.id)].join(",");
}

/** The deferred actions of every replica (distributed mode), read in the background. */
function sharedDeferred(st: ConsoleState): { ids(): string; refresh(): void } {
  let ids = "";
  let reading = false;
  return {
    ids: () => ids,
    refresh() {
      if (reading) return;
      reading = true;
      st.o.runtime.deferredQueue
        .list()
        .then(
          (items) => {
            ids = items.map((d) => d.id).join(",");
          },
          () => undefined, // unreadable now: the next refresh tries again
        )
        .finally(() => {
          reading = false;
        });
    },
  };
}

export function liveQueue(st: ConsoleState): LiveQueue {
  const streams = new Set<Stream>();
  let timer: NodeJS.Timeout | undefined;
  let last = "";
  let version = 0;
  let ticks = 0;
  const shared = sharedDeferred(st);
  const current = () => `${pendingIds(st)}|${shared.ids()}`;

  const end = (x: Stream) => {
    streams.delete(x);
    x.reply.raw.end();
    if (streams.size === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
  };
  const tick = () => {
    if (ticks % SHARED_TICKS === 0) shared.refresh();
    const ids = current();
    const changed = ids !== last;
    last = ids;
    if (changed) version++;
    ticks++;
    for (const x of streams) {
      if (!st.sessions.alive(x.sessionId)) {
        x.reply.raw.write("event: ended\ndata: session\n\n");
        end(x);
      } else if (changed) x.reply.raw.write(`event: queue\ndata: ${version}\n\n`);
      else if (ticks % HEARTBEAT_TICKS === 0) x.reply.raw.write(": keep-alive\n\n");
    }
  };

  return {
    attach(s, reply) {
      if (streams.size >= st.o.config.maxStreams)
        throw new ConsoleError("ERR_CONSOLE_BUSY", "too many live queue connections");
      reply.hijack();
      reply.raw.writeHead(200, {
        ...SECURITY_HEADERS,
        "content-type": "text/event-stream; charset=utf-8",
        connection: "keep-alive",
      });
      reply.raw.write(`retry: 2000\nevent: queue\ndata: ${version}\n\n`);
      const x: Stream = { sessionId: s.id, reply };
      streams.add(x);
      reply.raw.on("close", () => end(x));
      if (timer === undefined) {
        shared.refresh();
        last = current();
        timer = setInterval(tick, TICK_MS);
        timer.unref();
      }
    },
    close() {
      for (const x of [...streams]) end(x);
    },
  };
}
