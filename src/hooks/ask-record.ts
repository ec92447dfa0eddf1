// The engine's own record of every ask it issues (docs/hooks-files.md "Approvals"). An ask
// verdict carries a random `ask_id`; the record — the id, the session, the hook point, the
// artifacts the verdict named, when it was issued — is kept in the engine state with an
// HMAC-SHA256 under a key in the hooks state directory (secret-file.ts). A resolution that
// would be remembered (*_always, *_similar) must name a recorded, unexpired, unused ask of
// its session; what is remembered is the record's artifacts, never the event's. Unknown or
// forged ids, replays and expired asks are refused with a coded error (journaled by the
// engine as a failure).
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { canonicalJson, HookError } from "../contracts/index.js";
import { ASK_TTL_MS, type AskRecord, MAX_ASKS } from "./ask-schema.js";
import type { EvalContext } from "./context.js";
import type { Verdict } from "./schema-base.js";

function macOf(key: Buffer, r: Omit<AskRecord, "mac" | "resolved">): string {
  const body = canonicalJson({
    id: r.id,
    session: r.session,
    hook: r.hook,
    artifacts: r.artifacts,
    issuedAt: r.issuedAt,
  });
  return createHmac("sha256", key).update(`warden-ask-v1\u0000${body}`).digest("hex");
}

function macValid(key: Buffer, r: AskRecord): boolean {
  const want = Buffer.from(macOf(key, r), "hex");
  const got = Buffer.from(r.mac, "hex");
  return got.length === want.length && timingSafeEqual(got, want);
}

/** Records an ask the engine issues and returns the verdict carrying its `ask_id`. */
export function issueAsk(ctx: EvalContext, hook: string, v: Verdict): Verdict {
  if (v.decision !== "ask" || ctx.askKey === undefined) return v;
  let key: Buffer;
  try {
    key = ctx.askKey();
  } catch {
    // No key, no record: the ask can still be answered once, never remembered.
    return v;
  }
  const base = {
    id: `ask_${randomBytes(18).toString("base64url")}`,
    session: ctx.sessionId.slice(0, 256),
    hook: hook.slice(0, 64),
    artifacts: (v.artifacts ?? []).slice(0, 64).map((a) => a.slice(0, 4096)),
    issuedAt: ctx.now,
  };
  const asks = ctx.state.asks;
  asks.push({ ...base, resolved: false, mac: macOf(key, base) });
  if (asks.length > MAX_ASKS) asks.splice(0, asks.length - MAX_ASKS);
  return { ...v, ask_id: base.id };
}

/** The ask id a PostAskResolution names: `original_verdict.ask_id` (or a top-level `ask_id`). */
export function askIdOf(e: { original_verdict: Verdict; [k: string]: unknown }): string | undefined {
  const inner = (e.original_verdict as Record<string, unknown>).ask_id;
  const outer = e.ask_id;
  const id = typeof inner === "string" ? inner : typeof outer === "string" ? outer : undefined;
  return id?.slice(0, 128);
}

/**
 * Consumes the recorded ask a resolution names; throws ERR_HOOK_ASK_UNKNOWN (no id, not
 * recorded, another session's, MAC invalid), ERR_HOOK_ASK_REPLAYED or ERR_HOOK_ASK_EXPIRED.
 */
export function consumeAsk(ctx: EvalContext, id: string | undefined, hook: string): AskRecord {
  if (id === undefined) throw new HookError("ERR_HOOK_ASK_UNKNOWN", "the resolution names no ask id");
  const r = ctx.state.asks.find((a) => a.id === id);
  let key: Buffer | undefined;
  try {
    key = ctx.askKey?.();
  } catch {
    key = undefined;
  }
  if (
    r === undefined ||
    key === undefined ||
    !macValid(key, r) ||
    r.session !== ctx.sessionId ||
    r.hook !== hook
  ) {
    throw new HookError(
      "ERR_HOOK_ASK_UNKNOWN",
      `ask ${id.slice(0, 64)} was not issued by this engine in this session`,
    );
  }
  if (r.resolved) throw new HookError("ERR_HOOK_ASK_REPLAYED", `ask ${id.slice(0, 64)} was already resolved`);
  const age = Date.parse(ctx.now) - Date.parse(r.issuedAt);
  if (!(age >= 0 && age <= ASK_TTL_MS)) {
    throw new HookError(
      "ERR_HOOK_ASK_EXPIRED",
      `ask ${id.slice(0, 64)} expired (asks are resolved within an hour)`,
    );
  }
  r.resolved = true;
  return r;
}
