// The engine's memory across events of one host session: the run it maps to, the taint
// its tool results carried in, whether a result was poisoned, the denials it saw (for
// PreCompact's inject_context) and the user's remembered ask resolutions. A host such as
// Claude Code starts a new process per hook, so the state can live in a JSON file beside
// the journal (0600, written atomically, merged with what another invocation wrote).
// The bound (MAX_SESSIONS) never forgets a poisoned session: clean sessions are evicted
// first (ended, then untainted, then the longest idle); a poisoned one never is, and when
// poisoned sessions alone fill the bound a new session is refused (context.ts). A human
// clears a session with `warden hooks clear` (clearSession): its epoch rises, so a hook
// process that loaded the state before the clear cannot merge the old poison back.

import { createHash } from "node:crypto";
import {
  chmodSync,
  closeSync,
  existsSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { z } from "zod";
import { HookError, parseStrictJson, TaintLabel } from "../contracts/index.js";
import { AskRecordSchema, MAX_ASKS, mergeAsks } from "./ask-schema.js";

const MAX_SESSIONS = 256;
const MAX_TAINT = 64;
const MAX_DENIALS = 32;
const MAX_REMEMBERED = 1024;

export const DenialNoteSchema = z.strictObject({
  at: z.string().max(64),
  hook: z.string().max(64),
  tool: z.string().max(64).optional(),
  what: z.string().max(512),
  reason: z.string().max(512),
});
export type DenialNote = z.infer<typeof DenialNoteSchema>;

/**
 * The head of a session's persisted outputs (flow-outputs.ts): a file shorter than `count`
 * entries, or whose entry `count` does not carry `mac`, was truncated or replaced (fail closed).
 * `failed`: an output could not be stored; every later sink call is judged as overflowed.
 */
export const FlowHeadSchema = z.strictObject({
  count: z.number().int().nonnegative(),
  mac: z.string().max(128),
  failed: z.boolean().optional(),
});
export type FlowHead = z.infer<typeof FlowHeadSchema>;

export const SessionStateSchema = z.strictObject({
  runId: z.string().min(1).max(256),
  startedAt: z.string().max(64),
  /** The last event of the session (eviction takes the longest idle clean session first). */
  lastSeenAt: z.string().max(64).optional(),
  ended: z.boolean().default(false),
  /** The workspace root the host reported at SessionStart. */
  workspace: z.string().max(4096).optional(),
  taint: z.array(TaintLabel).max(MAX_TAINT).default([]),
  /** A tool result carried injection phrasing or a credential: egress is denied from here on. */
  poisoned: z.array(z.string().max(256)).max(MAX_TAINT).default([]),
  denials: z.array(DenialNoteSchema).max(MAX_DENIALS).default([]),
  counts: z.record(z.string().max(64), z.number().int().nonnegative()).default({}),
  /** Raised by each `warden hooks clear`: state merged from an older epoch loses its taint and poison. */
  epoch: z.number().int().nonnegative().default(0),
  /** The user prompts accepted so far; each one started the run `runId` (user-request.ts). */
  turn: z.number().int().nonnegative().optional(),
  /** The last accepted user prompt: the run's `originalRequest` (only the host's prompt event sets it). */
  request: z.string().max(32_768).optional(),
  /** The session's recorded tool outputs for flow control (flow-outputs.ts): how many, and the last one's MAC. */
  flow: FlowHeadSchema.optional(),
});
export type SessionState = z.infer<typeof SessionStateSchema>;

/** Remembered resolutions: exact artifact keys, and generalised patterns for *_similar. */
export const MemorySchema = z.strictObject({
  allow: z.array(z.string().max(4096)).max(MAX_REMEMBERED).default([]),
  deny: z.array(z.string().max(4096)).max(MAX_REMEMBERED).default([]),
  allowSimilar: z.array(z.string().max(4096)).max(MAX_REMEMBERED).default([]),
  denySimilar: z.array(z.string().max(4096)).max(MAX_REMEMBERED).default([]),
});
export type Memory = z.infer<typeof MemorySchema>;

export const EngineStateSchema = z.strictObject({
  version: z.literal(1),
  sessions: z.record(z.string().max(256), SessionStateSchema).default({}),
  memory: MemorySchema.default({ allow: [], deny: [], allowSimilar: [], denySimilar: [] }),
  /** The asks the engine issued (ask-record.ts): only these can become remembered resolutions. */
  asks: z.array(AskRecordSchema).max(MAX_ASKS).default([]),
});
export type EngineState = z.infer<typeof EngineStateSchema>;

export function emptyState(): EngineState {
  return {
    version: 1,
    sessions: {},
    memory: { allow: [], deny: [], allowSimilar: [], denySimilar: [] },
    asks: [],
  };
}

/** Reads a state file; a missing file is an empty state, an unreadable one fails closed (throws). */
export function loadState(path: string): EngineState {
  if (!existsSync(path)) return emptyState();
  try {
    return EngineStateSchema.parse(parseStrictJson(readFileSync(path, "utf8")));
  } catch (err) {
    throw new HookError(
      "ERR_HOOK_CONFIG_INVALID",
      `hook state ${path} is unreadable; refusing to start without it`,
      {
        cause: err,
      },
    );
  }
}

const union = <T>(a: readonly T[], b: readonly T[], key: (x: T) => string, max: number): T[] => {
  const seen = new Set<string>();
  const out: T[] = [];
  for (const x of [...a, ...b]) {
    const k = key(x);
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(x);
  }
  return out.slice(-max);
};

/** A session the bound may never evict: a result poisoned it. */
export function isProtected(s: SessionState): boolean {
  return s.poisoned.length > 0;
}

const evictionRank = (s: SessionState): [number, number, string] => [
  s.ended ? 0 : 1,
  s.taint.length > 0 ? 1 : 0,
  s.lastSeenAt ?? s.startedAt,
];

/**
 * Brings `sessions` within `max` by evicting clean sessions — ended before open, untainted
 * before tainted, longest idle first. Poisoned sessions are never evicted; the ids evicted
 * are returned. More than `max` remain only when poisoned sessions alone exceed it.
 */
export function pruneSessions(sessions: Record<string, SessionState>, max: number = MAX_SESSIONS): string[] {
  const ids = Object.keys(sessions);
  if (ids.length <= max) return [];
  const candidates = ids
    .filter((id) => !isProtected(sessions[id] as SessionState))
    .map((id) => ({ id, rank: evictionRank(sessions[id] as SessionState) }))
    .sort((a, b) => a.rank[0] - b.rank[0] || a.rank[1] - b.rank[1] || a.rank[2].localeCompare(b.rank[2]));
  const evicted = candidates.slice(0, ids.length - max).map((c) => c.id);
  for (const id of evicted) delete sessions[id];
  return evicted;
}

const later = (a: string | undefined, b: string | undefined) =>
  a === undefined ? b : b === undefined || a > b ? a : b;

/** The head with more outputs (outputs are only appended); a failure on either side stays. */
function laterFlow(a: FlowHead | undefined, b: FlowHead | undefined): FlowHead | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  const head = b.count > a.count ? b : a;
  return a.failed === true || b.failed === true ? { ...head, failed: true } : head;
}

function mergeSession(d: SessionState, s: SessionState): SessionState {
  // A clear (a higher epoch on disk) wins over taint and poison this process loaded before it.
  const cleared = d.epoch > s.epoch;
  const lastSeenAt = later(d.lastSeenAt, s.lastSeenAt);
  // A later user turn on disk (another hook process took the prompt) keeps its run and request.
  const turn = (d.turn ?? 0) > (s.turn ?? 0) ? { runId: d.runId, turn: d.turn, request: d.request } : {};
  const flow = cleared ? d.flow : laterFlow(d.flow, s.flow);
  const { flow: _mine, ...rest } = s;
  return {
    ...rest,
    ...turn,
    ...(flow !== undefined ? { flow } : {}),
    ...(lastSeenAt !== undefined ? { lastSeenAt } : {}),
    ended: s.ended || d.ended,
    epoch: Math.max(d.epoch, s.epoch),
    taint: cleared ? d.taint : union(d.taint, s.taint, (t) => `${t.source}\u0000${t.origin}`, MAX_TAINT),
    poisoned: cleared ? d.poisoned : union(d.poisoned, s.poisoned, (p) => p, MAX_TAINT),
    denials: union(d.denials, s.denials, (n) => `${n.at}\u0000${n.what}`, MAX_DENIALS),
    counts: Object.fromEntries(
      [...new Set([...Object.keys(d.counts), ...Object.keys(s.counts)])].map((k) => [
        k,
        Math.max(d.counts[k] ?? 0, s.counts[k] ?? 0),
      ]),
    ),
  };
}

/** Protective state only grows when two invocations race: the merge is a union. */
export function mergeState(disk: EngineState, mine: EngineState): EngineState {
  const sessions: Record<string, SessionState> = { ...disk.sessions };
  for (const [id, s] of Object.entries(mine.sessions)) {
    const d = sessions[id];
    sessions[id] = d ? mergeSession(d, s) : s;
  }
  pruneSessions(sessions);
  const m = (k: keyof Memory) => union(disk.memory[k], mine.memory[k], (x) => x, MAX_REMEMBERED);
  return {
    version: 1,
    sessions,
    memory: {
      allow: m("allow"),
      deny: m("deny"),
      allowSimilar: m("allowSimilar"),
      denySimilar: m("denySimilar"),
    },
    asks: mergeAsks(disk.asks, mine.asks),
  };
}

const LOCK_WAIT_MS = 3000;
const LOCK_STALE_MS = 10_000;

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Runs `fn` holding `<path>.lock` (created exclusively). Hook processes of parallel tool
 * calls save at the same moment; without the lock one's read-merge-write could drop the
 * taint another just wrote. A lock older than 10 s is a crashed holder's and is removed;
 * no lock within 3 s throws, and the engine answers that event fail-closed.
 */
export function withLock<T>(path: string, fn: () => T): T {
  const lock = `${path}.lock`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      closeSync(openSync(lock, "wx", 0o600));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      try {
        if (Date.now() - statSync(lock).mtimeMs > LOCK_STALE_MS) unlinkSync(lock);
      } catch {
        // Gone between the checks: try again.
      }
      if (Date.now() > deadline) throw new HookError("ERR_HOOK_ENGINE_FAULT", "the hook state is locked");
      sleepSync(5 + Math.floor(Math.random() * 10));
    }
  }
  try {
    return fn();
  } finally {
    unlinkSync(lock);
  }
}

/** Replaces the file atomically (0600); returns what was written, validated, and its text. */
function writeState(path: string, state: EngineState): { valid: EngineState; text: string } {
  // Validated before it is written: a state this engine cannot read back is never stored.
  const valid = EngineStateSchema.parse(state);
  const tmp = `${path}.${process.pid}.tmp`;
  const text = `${JSON.stringify(valid)}\n`;
  writeFileSync(tmp, text, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
  return { valid, text };
}

/** Merges with the file's current content and replaces it atomically (0600), under a lock. */
export function saveState(path: string, state: EngineState): void {
  saveStateStamped(path, state);
}

/** The identity of the state file's current content (a digest of its bytes); undefined if absent. */
export function stateStamp(path: string): string | undefined {
  try {
    return createHash("sha256").update(readFileSync(path)).digest("base64url");
  } catch {
    return undefined;
  }
}

/**
 * saveState that also returns what was written (the merge with every other writer's state)
 * and its stamp, taken under the lock. A long-lived holder (the hook daemon) passes the
 * stamp of what it last wrote or read as `known`: while the file still has it, no other
 * process wrote since, the file holds nothing the caller lacks, and it is not read again.
 */
export function saveStateStamped(
  path: string,
  state: EngineState,
  known?: string,
): { merged: EngineState; stamp: string } {
  return withLock(path, () => {
    const disk = known !== undefined && stateStamp(path) === known ? emptyState() : loadState(path);
    const { valid, text } = writeState(path, mergeState(disk, state));
    adoptClears(state, disk);
    return { merged: valid, stamp: createHash("sha256").update(text).digest("base64url") };
  });
}

/**
 * Takes into `mine` (an engine's state in memory) the clears a human made on disk since it
 * was loaded: a session whose disk epoch is higher gets the disk's taint, poison and end.
 * A long-lived engine (a daemon) calls `refreshState` before each event; saveState does it
 * after each.
 */
export function adoptClears(mine: EngineState, disk: EngineState): void {
  for (const [id, s] of Object.entries(mine.sessions)) {
    const d = disk.sessions[id];
    if (d === undefined || d.epoch <= s.epoch) continue;
    const { flow: _old, ...rest } = s;
    mine.sessions[id] = {
      ...rest,
      taint: d.taint,
      poisoned: d.poisoned,
      epoch: d.epoch,
      ended: d.ended,
      ...(d.flow !== undefined ? { flow: d.flow } : {}),
    };
  }
}

/** Reads the file and adopts its clears into `state` (a missing file changes nothing). */
export function refreshState(path: string, state: EngineState): void {
  adoptClears(state, loadState(path));
}

/** What `clearSession` removed. */
export interface Cleared {
  taint: TaintLabel[];
  poisoned: string[];
  epoch: number;
}

/**
 * A human's clear of one session (`warden hooks clear`): its taint and poison are dropped,
 * its epoch raised (an older process's merge cannot bring them back) and its Gate run
 * ended (the next event starts a fresh one). Denials and counts are kept as history.
 * Undefined when the state holds no such session.
 */
export function clearSession(path: string, sessionId: string): Cleared | undefined {
  return withLock(path, () => {
    const state = loadState(path);
    const s = state.sessions[sessionId];
    if (s === undefined) return undefined;
    const cleared = { taint: s.taint, poisoned: s.poisoned, epoch: s.epoch + 1 };
    // The recorded outputs go with the taint: the next epoch's outputs are a new store (flow-outputs.ts).
    const { flow: _flow, ...rest } = s;
    state.sessions[sessionId] = { ...rest, taint: [], poisoned: [], epoch: cleared.epoch, ended: true };
    writeState(path, state);
    return cleared;
  });
}

export const STATE_LIMITS = { MAX_SESSIONS, MAX_TAINT, MAX_DENIALS, MAX_REMEMBERED } as const;
