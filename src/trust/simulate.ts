// `warden trust simulate`: the real engine (engine.ts, table.ts) on a fresh in-memory
// table with an injected clock, fed a JSONL file of trust events in file order. The
// output object's shape is stable API (docs/trust.md): it is how a deployment tests its
// trust settings before rollout. A malformed line is refused with its line number.
import { z } from "zod";
import { isoTime, parseStrictJson, TrustError, WardenError } from "../contracts/index.js";
import type { TrustConfig } from "./config.js";
import { TrustEngine, type TrustView } from "./engine.js";
import { MemoryTrustStore } from "./store.js";
import { type Confidence, TRUST_EVENTS, type TrustEmission, type TrustStatus } from "./table.js";
import { parseIsoTime } from "./time.js";

const MAX_LINE = 64 * 1024;

const Id = z.string().min(1).max(1024);
const LineSchema = z.strictObject({
  time: z.string().max(64),
  subject: Id,
  event: z.enum(TRUST_EVENTS),
  truster: Id.optional(),
});

export interface SimulatedRow {
  score: number;
  interactions: number;
  confidence: Confidence;
  status: TrustStatus;
  quarantine_until: string | null;
  quarantine_count: number;
}

export interface SimulatedEmission {
  time: string;
  exec_act: string;
  subject: string;
  ext: Record<string, string | number>;
}

export interface SimulationResult {
  table: Record<string, Record<string, SimulatedRow>>;
  emitted: SimulatedEmission[];
}

export interface SimulationOptions {
  config: TrustConfig;
  /** Advance the clock to this time after the last event (decay, expiry). */
  until?: number;
}

function lineError(n: number, message: string): TrustError {
  return new TrustError("ERR_TRUST_EVENT_INVALID", `line ${n}: ${message}`);
}

interface ParsedLine {
  n: number;
  at: number;
  subject: string;
  event: (typeof TRUST_EVENTS)[number];
  truster?: string;
}

function parseLine(text: string, n: number): ParsedLine {
  if (text.length > MAX_LINE) throw lineError(n, `longer than ${MAX_LINE} characters`);
  let value: unknown;
  try {
    value = parseStrictJson(text);
  } catch (err) {
    throw lineError(n, err instanceof WardenError ? err.code : "not JSON");
  }
  const res = LineSchema.safeParse(value);
  if (!res.success) {
    const first = res.error.issues[0];
    const path = first === undefined ? "" : first.path.map(String).join(".");
    throw lineError(n, `${path || "(root)"}: ${first?.message ?? "invalid"}`);
  }
  const at = parseIsoTime(res.data.time);
  if (at === undefined) throw lineError(n, "time: not an RFC 3339 date-time with a zone");
  const out: ParsedLine = { n, at, subject: res.data.subject, event: res.data.event };
  if (res.data.truster !== undefined) out.truster = res.data.truster;
  return out;
}

/** Parses every non-blank line; times must not go backwards. */
export function parseEventLines(text: string): ParsedLine[] {
  const out: ParsedLine[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const raw = (lines[i] as string).replace(/\r$/, "");
    if (raw.trim() === "") continue;
    const line = parseLine(raw, i + 1);
    const prev = out[out.length - 1];
    if (prev !== undefined && line.at < prev.at) {
      throw lineError(line.n, `time is earlier than line ${prev.n}'s (events are applied in time order)`);
    }
    out.push(line);
  }
  return out;
}

function emission(e: TrustEmission): SimulatedEmission {
  return { time: isoTime(e.time), exec_act: e.execAct, subject: e.subject, ext: e.ext };
}

function row(v: TrustView): SimulatedRow {
  return {
    score: v.score,
    interactions: v.interactions,
    confidence: v.confidence,
    status: v.status,
    quarantine_until: v.quarantineUntil === null ? null : isoTime(v.quarantineUntil),
    quarantine_count: v.quarantineCount,
  };
}

/** Runs the events through a fresh engine and returns the table and the emitted ECTs. */
export async function simulateTrust(text: string, options: SimulationOptions): Promise<SimulationResult> {
  const lines = parseEventLines(text);
  const last = lines[lines.length - 1];
  if (options.until !== undefined && last !== undefined && options.until < last.at) {
    throw new TrustError(
      "ERR_TRUST_EVENT_INVALID",
      `--until is earlier than the last event (line ${last.n})`,
    );
  }
  let clock = lines[0]?.at ?? options.until ?? 0;
  const engine = new TrustEngine({
    store: new MemoryTrustStore(),
    config: options.config,
    clock: () => clock,
  });
  const emitted: SimulatedEmission[] = [];
  for (const line of lines) {
    clock = line.at;
    for (const c of await engine.tick(clock)) emitted.push(...c.emitted.map(emission));
    const input = { subject: line.subject, event: line.event, at: line.at, ect: null };
    const change = await engine.apply(
      line.truster === undefined ? input : { ...input, truster: line.truster },
    );
    emitted.push(...change.emitted.map(emission));
  }
  clock = options.until ?? clock;
  for (const c of await engine.tick(clock)) emitted.push(...c.emitted.map(emission));
  // Null-prototype maps: an agent may be called "__proto__".
  const table: SimulationResult["table"] = Object.create(null);
  for (const v of await engine.table(clock)) {
    const forTruster: Record<string, SimulatedRow> = table[v.truster] ?? Object.create(null);
    forTruster[v.subject] = row(v);
    table[v.truster] = forTruster;
  }
  return { table, emitted };
}
