// What a long-lived abort signal still holds for the calls that followed it: Node's dependant
// set (filled by `AbortSignal.any`, never pruned in Node 20–24, nodejs/node#55351) and its
// abort listeners (src/contracts/abort-scope.ts). Zero once every call released its scope.
import { getEventListeners } from "node:events";

export function heldBy(signal: AbortSignal): number {
  const sym = Object.getOwnPropertySymbols(signal).find((s) => s.description === "kDependantSignals");
  const dependants = sym === undefined ? undefined : (signal as unknown as Record<symbol, Set<unknown>>)[sym];
  return (dependants?.size ?? 0) + getEventListeners(signal, "abort").length;
}
