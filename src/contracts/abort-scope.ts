// A call's abort signal that also aborts with a long-lived one (the server's shutdown, a
// notifier's stop). `AbortSignal.any([own, longLived])` would do it, but in Node (20 to at
// least 24, nodejs/node#55351 and #64476) every call leaves an entry in the long-lived
// signal's dependant set that is never pruned: a server that combines its shutdown signal
// per request grows with every request. Here the long-lived signal holds one listener per
// call in flight, removed when the call releases its scope. `timedScope` adds a time bound
// (the `AbortSignal.timeout` half of the usual pair) whose timer is cleared on release.
import { setMaxListeners } from "node:events";

export interface AbortScope {
  /** Aborts with the parent, or by `abort`. */
  readonly signal: AbortSignal;
  abort(reason?: unknown): void;
  /** Stops following the parent (idempotent): call it once the call is over. */
  release(): void;
}

/** A scope that follows `parent` until released. */
export function abortScope(parent: AbortSignal): AbortScope {
  const own = new AbortController();
  const follow = () => own.abort(parent.reason);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    parent.removeEventListener("abort", follow);
  };
  if (parent.aborted) own.abort(parent.reason);
  else {
    // One listener per call in flight, each removed on release: not a leak to warn about.
    setMaxListeners(0, parent);
    parent.addEventListener("abort", follow, { once: true });
  }
  return { signal: own.signal, abort: (reason?: unknown) => own.abort(reason), release };
}

/** A scope that also aborts by itself when its time is up. */
export interface TimedScope extends AbortScope {
  /** The scope aborted because its time was up (not by its parent or `abort`). */
  readonly timedOut: boolean;
}

/** The longest delay a timer takes (larger ones fire at once in Node). */
const MAX_DELAY_MS = 2_147_483_647;

/**
 * A call's signal: follows `parent` (when given) and aborts with a `TimeoutError` after
 * `timeoutMs`, until released — what `AbortSignal.any([AbortSignal.timeout(ms), parent])`
 * does, without the entry per call that stays with a long-lived parent, and with the timer
 * cleared on release instead of left running until it fires.
 */
export function timedScope(parent: AbortSignal | undefined, timeoutMs: number): TimedScope {
  const inner: AbortScope = parent === undefined ? unparented() : abortScope(parent);
  let timedOut = false;
  const ms = Math.max(1, Math.min(MAX_DELAY_MS, Math.floor(timeoutMs)));
  const timer = setTimeout(() => {
    if (inner.signal.aborted) return;
    timedOut = true;
    inner.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError"));
  }, ms);
  // Like AbortSignal.timeout: a pending call's timer does not keep the process alive.
  timer.unref();
  return {
    signal: inner.signal,
    abort: inner.abort,
    get timedOut() {
      return timedOut;
    },
    release() {
      clearTimeout(timer);
      inner.release();
    },
  };
}

function unparented(): AbortScope {
  const own = new AbortController();
  return { signal: own.signal, abort: (reason?: unknown) => own.abort(reason), release: () => undefined };
}
