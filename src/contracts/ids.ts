// Identifiers: UUIDv4 / UUIDv7 for runs, decisions and events; W3C Trace Context
// (traceparent) compatible trace and span ids.
import { randomBytes, randomUUID } from "node:crypto";
import { ContractError } from "./errors.js";

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const TRACE_ID_PATTERN = /^(?!0{32})[0-9a-f]{32}$/;
export const SPAN_ID_PATTERN = /^(?!0{16})[0-9a-f]{16}$/;

export function uuidv4(): string {
  return randomUUID();
}

let lastMs = 0;
let seq = 0;

/**
 * UUIDv7 (RFC 9562): 48-bit Unix ms timestamp, then randomness. Within one
 * millisecond a 12-bit counter in rand_a keeps ids from one process monotonic.
 */
export function uuidv7(now: number = Date.now()): string {
  if (now <= lastMs) {
    seq++;
    if (seq > 0xfff) {
      lastMs++;
      seq = 0;
    }
  } else {
    lastMs = now;
    seq = 0;
  }
  const b = randomBytes(16);
  const ms = BigInt(lastMs);
  for (let k = 0; k < 6; k++) b[k] = Number((ms >> BigInt(8 * (5 - k))) & 0xffn);
  b[6] = 0x70 | ((seq >> 8) & 0x0f);
  b[7] = seq & 0xff;
  b[8] = 0x80 | (b[8]! & 0x3f);
  const h = b.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Milliseconds since the epoch encoded in a UUIDv7. */
export function uuidv7Time(id: string): number {
  if (!UUID_PATTERN.test(id) || id[14] !== "7") {
    throw new ContractError("ERR_CONTRACT_ID_INVALID", "not a UUIDv7");
  }
  return Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

function nonZeroHex(bytes: number): string {
  for (;;) {
    const h = randomBytes(bytes).toString("hex");
    if (/[^0]/.test(h)) return h;
  }
}

/** 16-byte W3C trace-id as 32 lowercase hex (never all zeros). */
export function newTraceId(): string {
  return nonZeroHex(16);
}

/** 8-byte W3C parent/span id as 16 lowercase hex (never all zeros). */
export function newSpanId(): string {
  return nonZeroHex(8);
}

export interface TraceParent {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

/** Format a W3C `traceparent` header (version 00). */
export function formatTraceparent(tp: TraceParent): string {
  if (!TRACE_ID_PATTERN.test(tp.traceId) || !SPAN_ID_PATTERN.test(tp.spanId)) {
    throw new ContractError("ERR_CONTRACT_ID_INVALID", "invalid trace or span id");
  }
  return `00-${tp.traceId}-${tp.spanId}-${tp.sampled ? "01" : "00"}`;
}

/** Parse a `traceparent` header; returns null when it is not valid version-00 syntax. */
export function parseTraceparent(header: string): TraceParent | null {
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(header.trim());
  if (!m) return null;
  const [, traceId, spanId, flags] = m as unknown as [string, string, string, string];
  if (!TRACE_ID_PATTERN.test(traceId) || !SPAN_ID_PATTERN.test(spanId)) return null;
  return { traceId, spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1 };
}
