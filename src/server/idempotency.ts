// `Idempotency-Key` on every acting POST a client may retry: /v1/execute, /v1/decide and
// /v1/messages (issue 36; docs/http-api.md, docs/distributed.md "Retries"). A client that got an ambiguous answer (a timeout, a dropped connection, a 503
// that says the action may have executed) retries with the same key and gets the first
// attempt's outcome instead of a second execution. The key is the principal's: claimed by the
// first attempt, its outcome (status and body) stored once known; a retry with another body is
// refused (422), one while the first attempt has no outcome yet (in flight, or its replica
// paused or died) is refused (409, "may have executed"), never run. An attempt that provably
// executed nothing (mayHaveExecuted: false, or a refusal before the Gate) gives its key back.
// The request hash covers the route and the body: one key names one request on one route.
// Distributed mode keeps the keys in PostgreSQL (store-pg idempotency.ts), shared by every
// replica; one node keeps them in memory (bounded, 24 h).
import { createHash } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import { EXECUTE_REPLAYED_EVENT } from "../runtime/index.js";
import type { IdempotencyClaim } from "../store-pg/index.js";
import { identityOf } from "./auth-plugin.js";
import { ApiError, toApiError } from "./errors.js";
import type { SidecarRuntime } from "./runtime.js";

export interface IdempotencyKeys {
  claim(principalId: string, key: string, requestHash: string): Promise<IdempotencyClaim>;
  finish(principalId: string, key: string, status: number, body: string): Promise<void>;
  release(principalId: string, key: string): Promise<void>;
}

const KEY = /^[A-Za-z0-9._:-]{1,128}$/;
const sha = (s: string) => `sha256:${createHash("sha256").update(s).digest("hex")}`;

/** The request's Idempotency-Key, undefined without one; a malformed one is a 400. */
export function idempotencyKeyOf(req: FastifyRequest): string | undefined {
  const v = req.headers["idempotency-key"];
  if (v === undefined) return undefined;
  if (typeof v !== "string" || !KEY.test(v))
    throw new ApiError("ERR_SERVER_REQUEST_INVALID", "Idempotency-Key: 1 to 128 of A-Z a-z 0-9 . _ : -");
  return v;
}

interface Entry {
  hash: string;
  at: number;
  done?: { status: number; body: string };
}

/** One node's keys: in memory, at most `max`, forgotten after `ttlMs`. */
export class MemoryIdempotencyKeys implements IdempotencyKeys {
  readonly #keys = new Map<string, Entry>();
  constructor(
    readonly max = 10_000,
    readonly ttlMs = 24 * 3_600_000,
    readonly clock: () => number = Date.now,
  ) {}

  async claim(principalId: string, key: string, requestHash: string): Promise<IdempotencyClaim> {
    const id = `${principalId}\n${key}`;
    const now = this.clock();
    const e = this.#keys.get(id);
    if (e !== undefined && e.at > now - this.ttlMs) {
      if (e.hash !== requestHash) return { kind: "mismatch" };
      return e.done !== undefined ? { kind: "done", ...e.done } : { kind: "pending", node: "this replica" };
    }
    this.#keys.delete(id);
    for (const [k] of this.#keys) {
      if (this.#keys.size < this.max) break;
      this.#keys.delete(k); // the oldest first (insertion order)
    }
    this.#keys.set(id, { hash: requestHash, at: now });
    return { kind: "new" };
  }

  async finish(principalId: string, key: string, status: number, body: string): Promise<void> {
    const e = this.#keys.get(`${principalId}\n${key}`);
    if (e !== undefined) e.done = { status, body };
  }

  async release(principalId: string, key: string): Promise<void> {
    const id = `${principalId}\n${key}`;
    if (this.#keys.get(id)?.done === undefined) this.#keys.delete(id);
  }
}

/**
 * Runs an execute attempt under `key` (undefined: no key, just runs it): the stored outcome
 * of an earlier attempt is answered instead; this attempt's outcome is stored before it is sent.
 */
export async function idempotent(
  keys: IdempotencyKeys,
  a: {
    principalId: string;
    key: string | undefined;
    req: FastifyRequest;
    reply: FastifyReply;
    /** Journals a replay (warden.execute.replayed); a failure does not withhold the stored outcome. */
    journal: (body: Record<string, unknown>) => Promise<unknown>;
    /** The route, e.g. "POST /v1/decide" (in the hash and the replay entry). */
    route: string;
  },
  attempt: () => Promise<Record<string, unknown>>,
): Promise<unknown> {
  if (a.key === undefined) return attempt();
  const { principalId, key } = a;
  const hash = sha(`${a.route}\n${JSON.stringify(a.req.body ?? null)}`);
  const c = await keys.claim(principalId, key, hash);
  if (c.kind === "done") {
    await a.journal(replayBody({ ...a, key }, c)).catch(() => undefined);
    void a.reply.code(c.status).header("idempotent-replayed", "true").type("application/json");
    return a.reply.send(c.body);
  }
  if (c.kind === "mismatch")
    throw new ApiError(
      "ERR_SERVER_IDEMPOTENCY_MISMATCH",
      "this Idempotency-Key was used for another request",
    );
  if (c.kind === "pending")
    throw new ApiError(
      "ERR_SERVER_IDEMPOTENCY_PENDING",
      "the first attempt with this Idempotency-Key has no outcome yet: it may be executing or may have executed; retry later with the same key",
      { details: { mayHaveExecuted: true } },
    );
  let out: Record<string, unknown>;
  try {
    out = await attempt();
  } catch (err) {
    const e = toApiError(err);
    if (e.details?.mayHaveExecuted === true)
      await keys.finish(principalId, key, e.status, JSON.stringify(e.body())).catch(() => undefined);
    else await keys.release(principalId, key).catch(() => undefined);
    throw err;
  }
  // Stored before it is sent: a retry after a lost answer gets this outcome. A store failure
  // leaves the key pending (a retry is refused 409, never executed again).
  await keys.finish(principalId, key, a.reply.statusCode, JSON.stringify(out)).catch(() => undefined);
  return out;
}

/** The body of a `warden.execute.replayed` entry (the key hashed: it may be guessable). */
function replayBody(
  a: { principalId: string; key: string; req: FastifyRequest; route: string },
  done: { status: number; body: string },
): Record<string, unknown> {
  const { principalId, key, req } = a;
  const runId = (req.body as { runId?: unknown } | null)?.runId;
  let decisionId: unknown;
  try {
    const b = JSON.parse(done.body) as {
      decisionId?: unknown;
      error?: { details?: { decisionId?: unknown } };
    };
    decisionId = b.decisionId ?? b.error?.details?.decisionId;
  } catch {
    decisionId = undefined;
  }
  return {
    run_id: typeof runId === "string" ? runId : null,
    principal_id: principalId,
    key_sha256: sha(`${principalId}\n${key}`),
    decision_id: typeof decisionId === "string" ? decisionId : null,
    status: done.status,
    route: a.route,
  };
}

/** One node's keys per runtime (distributed mode: the shared store's). */
const memoryKeys = new WeakMap<SidecarRuntime, IdempotencyKeys>();

/**
 * An acting route's attempt under the request's Idempotency-Key (none: just runs it). The
 * keys are the shared store's in distributed mode, else this runtime's memory; a replay is
 * journaled without an entry-level run (it decides nothing for the run).
 */
export function keyedAttempt(
  runtime: SidecarRuntime,
  route: string,
  req: FastifyRequest,
  reply: FastifyReply,
  attempt: () => Promise<Record<string, unknown>>,
): Promise<unknown> {
  let keys: IdempotencyKeys | undefined = runtime.composed.idempotency ?? memoryKeys.get(runtime);
  if (keys === undefined) {
    keys = new MemoryIdempotencyKeys();
    memoryKeys.set(runtime, keys);
  }
  const key = idempotencyKeyOf(req);
  const journal = (body: Record<string, unknown>) =>
    runtime.journal.append({ type: EXECUTE_REPLAYED_EVENT, body });
  return idempotent(keys, { principalId: identityOf(req).id, key, req, reply, journal, route }, attempt);
}
