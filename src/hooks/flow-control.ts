// Flow control through the hooks (docs/hooks-sessions.md "Flow control",
// docs/threat-model.md#flow-control). PostToolUse stores every untrusted result with its
// taint labels (flow-outputs.ts: in Warden's hooks state directory, sealed, bounded); a
// PreToolUse sink call — an MCP tool, a web request that sends (POST, PUT, PATCH, DELETE) —
// feeds the stored outputs its values can match into its Gate session's value provenance
// (`Session.observeOutput`) before the Gate judges it, so src/gate/flow.ts computes the
// same flow facts as in the sidecar and the host-tools preset's `flow:` rules decide. The
// user's prompt (user-request.ts) is the trusted origin: a value the user named is never
// copied. A store that fails its checks, overflowed its bounds or could not be written makes
// every later sink call judged as overflowed (fail closed): an address or substantial value
// in it counts as copied. Other calls (files, shell, reads) load nothing.

import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Session } from "../context/index.js";
import type { TaintLabel } from "../contracts/index.js";
import { sessionKeyOf } from "./contain.js";
import { type EvalContext, poison } from "./context.js";
import {
  appendOutput,
  type FlowStore,
  type Loaded,
  loadOutputs,
  type StoredOutput,
  tokensOf,
} from "./flow-outputs.js";
import { withLock } from "./state.js";
import type { GateShape } from "./taxonomy.js";
import { requestFields } from "./user-request.js";

/** The outputs fed into each Gate session (by stored number; 0: the failure mark). */
const fed = new WeakMap<Session, Set<number>>();
/** Outputs of engines without a state directory (in-process engines), by session. */
const memory = new WeakMap<object, Map<string, StoredOutput[]>>();
/** Characters of a call's values read for its tokens; a larger call matches every output. */
const MAX_QUERY_CHARS = 256 * 1024;
const READ_METHODS: ReadonlySet<string> = new Set(["get", "head", "options"]);
const FAILED: TaintLabel[] = [{ source: "tool-output", origin: "hook-outputs#unverifiable" }];

/** Whether the Gate judges this call's flow: an MCP tool, or a web request that sends. */
export function flowJudged(shape: GateShape): boolean {
  return shape.toolClass === "mcp" || (shape.toolClass === "http" && !READ_METHODS.has(shape.action));
}

/**
 * The values whose tokens choose the outputs a sink call is judged with: the MCP tool's own
 * arguments, or the request's URL — not the server label and tool name the host's
 * configuration chose (Cursor's server label is its URL's host: a page naming that host must
 * not make every call of the server copied).
 */
export function flowValues(shape: GateShape): unknown {
  return shape.toolClass === "mcp" ? shape.parameters.arguments : shape.parameters.url;
}

/**
 * The Gate's `valuesIn` for a call: an MCP call's server label and tool name come from the
 * host's configuration, and only its arguments are values an output can have supplied (in an
 * overflowed store, a substantial value counts as copied: `send_email` must not).
 */
export function flowScope(shape: GateShape): { valuesIn?: string } {
  return shape.toolClass === "mcp" ? { valuesIn: "arguments" } : {};
}

function storeOf(ctx: EvalContext, hostId: string): FlowStore | undefined {
  const dir = ctx.stateDirs?.[0];
  if (dir === undefined || ctx.askKey === undefined) return undefined;
  const name = `${sessionKeyOf(hostId, ctx.sessionId)}.e${ctx.session.epoch}`;
  return { dir: join(dir, "outputs"), name, key: ctx.askKey() };
}

function memoryOf(ctx: EvalContext): StoredOutput[] {
  const bySession = memory.get(ctx.state) ?? new Map<string, StoredOutput[]>();
  memory.set(ctx.state, bySession);
  const key = `${ctx.sessionId}#${ctx.session.epoch}`;
  const list = bySession.get(key) ?? [];
  bySession.set(key, list);
  return list;
}

/** A cleared session's first output of its new epoch removes the files of its earlier epochs. */
function sweepEarlierEpochs(st: FlowStore, hostId: string, sessionId: string): void {
  const key = `${sessionKeyOf(hostId, sessionId)}.e`;
  for (const f of readdirSync(st.dir)) {
    if (f.startsWith(key) && !f.startsWith(`${st.name}.`)) rmSync(join(st.dir, f), { force: true });
  }
}

/** Stores one result's text with its taint labels (an untrusted result: `labels` non-empty). */
export function recordFlowOutput(
  ctx: EvalContext,
  hostId: string,
  text: string,
  truncated: boolean,
  labels: TaintLabel[],
): void {
  if (labels.length === 0) return;
  const s = ctx.session;
  let store: FlowStore | undefined;
  try {
    store = storeOf(ctx, hostId);
    if (store === undefined) {
      const list = memoryOf(ctx);
      const overflowed = truncated;
      const tokens = Uint32Array.from(tokensOf(text));
      list.push({ n: list.length + 1, labels, tokens, overflowed, text: () => text });
      return;
    }
    const st = store;
    mkdirSync(st.dir, { recursive: true, mode: 0o700 });
    if ((s.flow?.count ?? 0) === 0 && s.epoch > 0) sweepEarlierEpochs(st, hostId, ctx.sessionId);
    s.flow = withLock(join(st.dir, `${st.name}.idx`), () =>
      appendOutput(st, s.flow, text, labels, truncated),
    );
  } catch {
    // Not stored (the store failed its checks, is full, or the disk refused): fail closed.
    s.flow = { ...(s.flow ?? { count: 0, mac: "" }), failed: true };
  }
}

/** The Gate session a hook call of this session is judged in (undefined: the Gate refuses it anyway). */
function gateSession(ctx: EvalContext): Session | undefined {
  const runs = ctx.runtime.sessions;
  const open = runs.get(ctx.session.runId);
  if (open !== undefined || ctx.boundPrincipal === true) return open;
  try {
    return runs.open({ runId: ctx.session.runId, principalId: ctx.principalId, ...requestFields(ctx) });
  } catch {
    return undefined;
  }
}

/** The string and number leaves of a call's values, as prefilter tokens (undefined: too large, match all). */
function queryTokens(values: unknown): Set<number> | undefined {
  const parts: string[] = [];
  let left = MAX_QUERY_CHARS;
  const walk = (v: unknown, depth: number): boolean => {
    if (typeof v === "string" || typeof v === "number") {
      const t = String(v);
      left -= t.length;
      parts.push(t);
      return left >= 0;
    }
    if (v === null || typeof v !== "object") return true;
    if (depth > 64) return false;
    for (const x of Object.values(v)) if (!walk(x, depth + 1)) return false;
    return true;
  };
  if (!walk(values, 0)) return undefined;
  return new Set(parts.flatMap((p) => [...tokensOf(p)]));
}

/** Whether an output holds one of the call's tokens (or must be fed whatever it holds). */
function matches(o: StoredOutput, want: Set<number> | undefined): boolean {
  if (want === undefined || o.overflowed) return true;
  for (const h of o.tokens) if (want.has(h)) return true;
  return false;
}

/** The session's stored outputs; a store that cannot even be located (no key) fails like a broken one. */
function loadFor(ctx: EvalContext, hostId: string): Loaded {
  try {
    const store = storeOf(ctx, hostId);
    return store === undefined
      ? { ok: true, outputs: memoryOf(ctx), head: undefined }
      : loadOutputs(store, ctx.session.flow);
  } catch (err) {
    return { ok: false, why: err instanceof Error ? err.message.slice(0, 256) : "unavailable" };
  }
}

/** Feeds the outputs a sink call can have copied from into its Gate session, each once. */
export function feedFlow(ctx: EvalContext, hostId: string, values: unknown): void {
  const session = gateSession(ctx);
  if (session === undefined) return;
  const done = fed.get(session) ?? new Set<number>();
  fed.set(session, done);
  const loaded = loadFor(ctx, hostId);
  if ((!loaded.ok || ctx.session.flow?.failed === true) && !done.has(0)) {
    session.observeOutput(0, undefined, FAILED, { overflowed: true });
    done.add(0);
  }
  // Tampering (or a store this engine cannot read) poisons the session: visible in
  // `warden hooks status`, and direct egress is denied until a human clears it.
  if (!loaded.ok) {
    poison(ctx.session, `the stored tool outputs failed their check: ${loaded.why}`);
    return;
  }
  const want = queryTokens(values);
  for (const o of loaded.outputs) {
    if (done.has(o.n) || !matches(o, want)) continue;
    done.add(o.n);
    const text = o.text();
    // A text that no longer matches its digest was changed: it lends its taint to everything.
    session.observeOutput(o.n, text, o.labels, { overflowed: o.overflowed || text === undefined });
  }
}
