// Issue 37: a flood of requests grows the sidecar's shutdown signal without bound. Each
// /v1/decide and /v1/execute combined its own abort signal with the server's long-lived
// shutdown signal through AbortSignal.any, which in Node (20 to at least 24,
// nodejs/node#55351) leaves an entry per call in the long-lived signal's dependant set,
// never pruned: heap snapshots of the flood bench showed one more WeakRef per request.
// callSignal now follows the shutdown signal only while the call's response is open.
// Sizes are measured, never time.
import { EventEmitter } from "node:events";
import type { FastifyReply } from "fastify";
import { describe, expect, it } from "vitest";
import { abortScope } from "../../src/contracts/index.js";
import { callSignal, type RouteContext } from "../../src/server/routes/context.js";
import { heldBy as held } from "../helpers/abort-held.js";

const FLOOD = 20_000;

/** A reply whose response closes (finished, or the client left) when the test says. */
function reply(): { reply: FastifyReply; close(finished: boolean): void } {
  const raw = Object.assign(new EventEmitter(), { writableFinished: false });
  return {
    reply: { raw } as unknown as FastifyReply,
    close(finished) {
      raw.writableFinished = finished;
      raw.emit("close");
    },
  };
}

describe("a flood of requests grows the sidecar's shutdown signal without bound", () => {
  it("20 000 answered calls leave nothing with the shutdown signal", () => {
    const shutdown = new AbortController();
    const ctx = { shutdown: shutdown.signal } as RouteContext;
    for (let i = 0; i < FLOOD; i++) {
      const r = reply();
      const signal = callSignal(ctx, r.reply);
      // Something observes the call's signal, as the fair queue and the Gate do.
      signal.addEventListener("abort", () => undefined);
      r.close(true);
    }
    expect(held(shutdown.signal)).toBe(0);
  });

  it("a call in flight still aborts on shutdown and when its client leaves; released scopes do not", () => {
    const shutdown = new AbortController();
    const ctx = { shutdown: shutdown.signal } as RouteContext;
    const inFlight = reply();
    const running = callSignal(ctx, inFlight.reply);
    const left = reply();
    const leaving = callSignal(ctx, left.reply);
    left.close(false);
    expect(leaving.aborted).toBe(true);
    const done = abortScope(shutdown.signal);
    done.release();
    expect(held(shutdown.signal)).toBe(1);
    shutdown.abort(new Error("shutting down"));
    expect(running.aborted).toBe(true);
    expect(done.signal.aborted).toBe(false);
    expect(abortScope(shutdown.signal).signal.aborted).toBe(true);
  });
});
