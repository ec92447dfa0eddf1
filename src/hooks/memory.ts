// Ask-resolution memory (§6.6, §8.8.1). The host passes the user's raw choice; the engine
// decides the scope from the original verdict's artifacts: *_always remembers the exact
// artifact values, *_similar a generalisation (a URL's origin, a command's program and
// first argument, a path's directory). A remembered allow turns a later ask on the same
// artifacts into allow; it never overrides a policy deny. A remembered deny turns any
// later verdict on them into deny.
//
// Only an ask the engine itself issued and recorded can be remembered (ask-record.ts): the
// resolution names its ask id and the artifacts come from the engine's record, never from
// the verdict an event carries (an agent that can post an event cannot approve itself).
import { dirname } from "node:path";
import { askIdOf, consumeAsk } from "./ask-record.js";
import { count, type EvalContext } from "./context.js";
import type { Artifact, CanonicalTool, Resolution, Verdict } from "./schema-base.js";
import type { HookEventOf } from "./schema-points.js";
import type { Memory } from "./state.js";
import { allow, fromSignal, merge } from "./verdicts.js";

/** The generalised form of an artifact value for *_similar. */
export function similarKey(value: string): string {
  if (/^https?:\/\//i.test(value)) {
    try {
      return `origin:${new URL(value).origin}`;
    } catch {
      return `exact:${value}`;
    }
  }
  if (value.startsWith("/") || value.startsWith("./") || value.startsWith("~"))
    return `dir:${dirname(value)}`;
  const words = value.trim().split(/\s+/).slice(0, 2);
  return `cmd:${words.join(" ")}`;
}

function push(list: string[], values: readonly string[]): void {
  for (const v of values) if (!list.includes(v)) list.push(v);
  if (list.length > 1024) list.splice(0, list.length - 1024);
}

/** Updates the memory from one resolution of a recorded ask; returns whether anything is remembered. */
export function remember(memory: Memory, resolution: Resolution, artifacts: readonly string[]): boolean {
  const values = artifacts.filter((v) => !v.startsWith("[REDACTED:"));
  if (values.length === 0) return false;
  switch (resolution) {
    case "allow_always":
      push(memory.allow, values);
      return true;
    case "deny_always":
      push(memory.deny, values);
      return true;
    case "allow_similar":
      push(memory.allowSimilar, values.map(similarKey));
      return true;
    case "deny_similar":
      push(memory.denySimilar, values.map(similarKey));
      return true;
    default:
      return false;
  }
}

const KEYED = new Set<Artifact["type"]>(["url", "command", "file_path", "package", "network_address"]);

/** Applies remembered resolutions to a verdict on a tool call's artifacts. */
export function recalled(
  memory: Memory,
  tool: CanonicalTool,
  artifacts: readonly Artifact[],
  v: Verdict,
): Verdict {
  const keyed = artifacts.filter((a) => KEYED.has(a.type)).map((a) => a.value);
  if (keyed.length === 0) return v;
  const denied = keyed.find((k) => memory.deny.includes(k) || memory.denySimilar.includes(similarKey(k)));
  if (denied !== undefined) {
    return merge(
      v,
      fromSignal({
        decision: "deny",
        category: v.category,
        source: "user_resolution",
        rule: "aarts-remembered-deny",
        reason: `the user chose to always deny ${tool} on ${denied.slice(0, 256)}`,
        artifacts: [denied],
      }),
    );
  }
  if (v.decision !== "ask") return v;
  const allowed = keyed.every((k) => memory.allow.includes(k) || memory.allowSimilar.includes(similarKey(k)));
  if (!allowed) return v;
  return {
    ...fromSignal({
      decision: "allow",
      category: v.category,
      source: "user_resolution",
      rule: "aarts-remembered-allow",
      reason: `the user chose to always allow this ${tool} call`,
    }),
    artifacts: keyed,
  };
}

const REMEMBERED: ReadonlySet<Resolution> = new Set<Resolution>([
  "allow_always",
  "allow_similar",
  "deny_always",
  "deny_similar",
]);

/**
 * PostAskResolution: a remembered resolution (*_always, *_similar) consumes the recorded ask
 * it names and remembers that record's artifacts; a one-time answer naming an ask consumes it
 * too (a later replay is refused). Coded errors (ask-record.ts) are thrown to the engine.
 */
export function resolveAsk(ctx: EvalContext, e: HookEventOf<"PostAskResolution">): Verdict {
  count(ctx.session, "ask_resolutions");
  const id = askIdOf(e);
  if (!REMEMBERED.has(e.resolution) && id === undefined) {
    return allow("verdict_resolution", "user_resolution", `noted ${e.resolution}`);
  }
  const record = consumeAsk(ctx, id, e.original_hook_point);
  const kept = REMEMBERED.has(e.resolution) && remember(ctx.state.memory, e.resolution, record.artifacts);
  return allow(
    "verdict_resolution",
    "user_resolution",
    kept
      ? `remembered ${e.resolution} for ${record.artifacts.length} artifacts of ${record.id}`
      : `noted ${e.resolution} for ${record.id}`,
  );
}
