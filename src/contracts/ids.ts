// Identifiers: UUIDv4 / UUIDv7 for runs, decisions and events; W3C Trace Context
// (traceparent) compatible trace and span ids.
import { randomBytes, randomFillSync, randomUUID } from "node:crypto";
import { ContractError } from "./errors.js";

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const TRACE_ID_PATTERN = /^(?!0{32})[0-9a-f]{32}$/;
export const SPAN_ID_PATTERN = /^(?!0{16})[0-9a-f]{16}$/;

export function uuidv4(): string {
  return randomUUID();
}

let lastMs = 0;
let seq = 0;

// Random bytes for uuidv7 come from a pool filled by the CSPRNG 512 ids at a time: one
// randomFillSync per id cost more than the rest of the id. Each pooled byte is used once.
const ID_RANDOM_BYTES = 8;
const pool = Buffer.allocUnsafe(ID_RANDOM_BYTES * 512);
let poolOffset = pool.length;

// Two hex digits per byte value, and the id's timestamp text (`tttttttt-tttt-7`) of the
// last millisecond: ids of one millisecond share it.
const HEX: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
let tsMs = -1;
let tsText = "";

/**
 * UUIDv7 (RFC 9562): 48-bit Unix ms timestamp, then randomness. Within one
 * millisecond a 12-bit counter in rand_a keeps ids from one process monotonic.
 */
export function uuidv7(now: number = Date.now()): string {
  if (!Number.isSafeInteger(now) || now < 0 || now > 0xffff_ffff_ffff) {
    throw new RangeError("uuidv7: the timestamp must be whole milliseconds within 48 bits");
  }
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
  if (poolOffset + ID_RANDOM_BYTES > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const o = poolOffset;
  poolOffset += ID_RANDOM_BYTES;
  if (lastMs !== tsMs) {
    const ts = lastMs.toString(16).padStart(12, "0");
    tsText = `${ts.slice(0, 8)}-${ts.slice(8)}-7`;
    tsMs = lastMs;
  }
  const p = pool;
  // rand_b: the variant bits (10) over the first random byte, then 7 more random bytes.
  return `${tsText}${seq.toString(16).padStart(3, "0")}-${HEX[0x80 | (p[o]! & 0x3f)]}${HEX[p[o + 1]!]}-${HEX[p[o + 2]!]}${HEX[p[o + 3]!]}${HEX[p[o + 4]!]}${HEX[p[o + 5]!]}${HEX[p[o + 6]!]}${HEX[p[o + 7]!]}`;
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

// ---------------------------------------------------------------------------------
// Branded ids. One grammar for every kind: printable ASCII without space (0x21–0x7E),
// 1 to 128 characters. The brand says "this string was checked against the grammar
// and names a thing of this kind"; only the functions below hand one out.

declare const idBrand: unique symbol;
/** A string that passed `parseId` for kind `K`. */
export type Id<K extends string> = string & { readonly [idBrand]: K };
export type RunId = Id<"run">;
export type DecisionId = Id<"decision">;
export type PrincipalId = Id<"principal">;
export type TraceId = Id<"trace">;
export type IdKind = "run" | "decision" | "principal" | "trace";

export const ID_PATTERN = /^[\x21-\x7e]{1,128}$/;
export const ID_MAX_LENGTH = 128;

export type IdParse<K extends IdKind> = { ok: true; id: Id<K> } | { ok: false; kind: K; reason: string };

/** Checks `value` against the id grammar; never throws. */
export function parseId<K extends IdKind>(kind: K, value: unknown): IdParse<K> {
  if (typeof value !== "string") return { ok: false, kind, reason: "not a string" };
  if (value.length === 0 || value.length > ID_MAX_LENGTH)
    return { ok: false, kind, reason: `length must be 1..${ID_MAX_LENGTH}` };
  if (!ID_PATTERN.test(value)) return { ok: false, kind, reason: "printable ASCII without space only" };
  return { ok: true, id: value as Id<K> };
}

function brand<K extends IdKind>(kind: K, value: unknown): Id<K> {
  const r = parseId(kind, value);
  if (!r.ok) throw new ContractError("ERR_CONTRACT_ID_INVALID", `invalid ${kind} id: ${r.reason}`);
  return r.id;
}

/** The id constructors: throw ERR_CONTRACT_ID_INVALID when the value breaks the grammar. */
export const runId = (value: unknown): RunId => brand("run", value);
export const decisionId = (value: unknown): DecisionId => brand("decision", value);
export const principalId = (value: unknown): PrincipalId => brand("principal", value);
export const traceId = (value: unknown): TraceId => brand("trace", value);

/** A fresh decision id (a UUIDv7, which the grammar admits by construction). */
export function newDecisionId(now?: number): DecisionId {
  return uuidv7(now) as DecisionId;
}
