// Applying `modify` payloads: the executed parameters are a rewritten copy of the
// request's, never the original object, and every change is listed so the decision
// record can show both. Redactions never copy the redacted value into the change list.
// A clamp never passes a value it cannot bound: min/max need a finite number, maxLength a
// string; any other present value (a numeric string, an array, null, ...), or a clamp or
// redact path that runs into a non-object, makes the rewrite fail and the bundle denies
// (RULE_NOT_EVALUABLE).
import { isPlainObject } from "../contracts/index.js";
import type { ModifyChange, ModifySpec } from "./types.js";

export const REDACTED = "[REDACTED]";
const FORBIDDEN = new Set(["__proto__", "constructor", "prototype"]);

function segments(path: string): string[] {
  const segs = path.split(".");
  // Paths are validated at load; this guards programmatic callers too.
  if (segs.some((s) => s === "" || FORBIDDEN.has(s))) throw new TypeError(`invalid modify path ${path}`);
  return segs;
}

/** "blocked": a prefix of the path holds a present value that is not an object (an array, a string, ...). */
type Lookup = { state: "found"; value: unknown } | { state: "absent" } | { state: "blocked" };

function getPath(root: Record<string, unknown>, segs: string[]): Lookup {
  let cur: unknown = root;
  for (const s of segs) {
    if (!isPlainObject(cur)) return { state: "blocked" };
    if (!Object.hasOwn(cur, s)) return { state: "absent" };
    cur = cur[s];
  }
  return { state: "found", value: cur };
}

function setPath(root: Record<string, unknown>, segs: string[], value: unknown): void {
  let cur = root;
  for (const s of segs.slice(0, -1)) {
    const next = Object.hasOwn(cur, s) ? cur[s] : undefined;
    if (!isPlainObject(next)) {
      const fresh: Record<string, unknown> = {};
      cur[s] = fresh;
      cur = fresh;
    } else {
      cur = next;
    }
  }
  cur[segs[segs.length - 1]!] = value;
}

export type ModifyResult =
  | { ok: true; parameters: Record<string, unknown>; changes: ModifyChange[] }
  /** `path` (from the rule) holds a value the clamp cannot bound or sits under a non-object. */
  | { ok: false; path: string };

type Clamp = NonNullable<ModifySpec["clamp"]>[string];

/** The clamped value, or undefined when the value's type is not one the clamp bounds. */
function clampValue(c: Clamp, value: unknown): { next: unknown } | undefined {
  const numeric = c.min !== undefined || c.max !== undefined;
  if (numeric && typeof value === "number" && Number.isFinite(value)) {
    return {
      next: Math.min(c.max ?? Number.POSITIVE_INFINITY, Math.max(c.min ?? Number.NEGATIVE_INFINITY, value)),
    };
  }
  if (c.maxLength !== undefined && typeof value === "string") {
    return { next: value.length > c.maxLength ? value.slice(0, c.maxLength) : value };
  }
  return undefined;
}

/** Applies the payloads in order to a deep copy of `parameters`. */
export function applyModify(parameters: Record<string, unknown>, specs: readonly ModifySpec[]): ModifyResult {
  const out = structuredClone(parameters);
  const changes: ModifyChange[] = [];
  for (const spec of specs) {
    for (const [path, to] of Object.entries(spec.set ?? {})) {
      const segs = segments(path);
      const before = getPath(out, segs);
      const change: ModifyChange = { path, op: "set", to: structuredClone(to) };
      if (before.state === "found") change.from = before.value;
      setPath(out, segs, structuredClone(to));
      changes.push(change);
    }
    for (const path of spec.redact ?? []) {
      const segs = segments(path);
      const at = getPath(out, segs);
      // A value hidden under an array or string cannot be redacted: refuse, never pass it on.
      if (at.state === "blocked") return { ok: false, path };
      if (at.state === "absent") continue;
      setPath(out, segs, REDACTED);
      changes.push({ path, op: "redact", to: REDACTED });
    }
    for (const [path, c] of Object.entries(spec.clamp ?? {})) {
      const segs = segments(path);
      const at = getPath(out, segs);
      if (at.state === "blocked") return { ok: false, path };
      if (at.state === "absent") continue;
      const value = at.value;
      const clamped = clampValue(c, value);
      if (clamped === undefined) return { ok: false, path };
      const next = clamped.next;
      if (next !== value) {
        setPath(out, segs, next);
        changes.push({ path, op: "clamp", from: value, to: next });
      }
    }
  }
  return { ok: true, parameters: out, changes };
}
