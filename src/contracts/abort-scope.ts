// A call's abort signal that also aborts with a long-lived one (the server's shutdown, a
// notifier's stop). `AbortSignal.any([own, longLived])` would do it, but in Node (20 to at
// least 24, nodejs/node#55351 and #64476) every call leaves an entry in the long-lived
// signal's dependant set that is never pruned: a server that combines its shutdown signal
// per request grows with every request. Here the long-lived signal holds one listener per
// call in flight, removed when the call releases its scope.
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
