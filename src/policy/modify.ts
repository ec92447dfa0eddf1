// Applying `modify` payloads: the executed parameters are a rewritten copy of the
// request's, never the original object, and every change is listed so the decision
// record can show both. Redactions never copy the redacted value into the change list.
import type { ModifyChange, ModifySpec } from "./types.js";

export const REDACTED = "[REDACTED]";
const FORBIDDEN = new Set(["__proto__", "constructor", "prototype"]);

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function segments(path: string): string[] {
  const segs = path.split(".");
  // Paths are validated at load; this guards programmatic callers too.
  if (segs.some((s) => s === "" || FORBIDDEN.has(s))) throw new TypeError(`invalid modify path ${path}`);
  return segs;
}

function getPath(root: Record<string, unknown>, segs: string[]): { found: boolean; value: unknown } {
  let cur: unknown = root;
  for (const s of segs) {
    if (!isPlainObject(cur) || !Object.hasOwn(cur, s)) return { found: false, value: undefined };
    cur = cur[s];
  }
  return { found: true, value: cur };
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

/** Applies the payloads in order to a deep copy of `parameters`. */
export function applyModify(
  parameters: Record<string, unknown>,
  specs: readonly ModifySpec[],
): { parameters: Record<string, unknown>; changes: ModifyChange[] } {
  const out = structuredClone(parameters);
  const changes: ModifyChange[] = [];
  for (const spec of specs) {
    for (const [path, to] of Object.entries(spec.set ?? {})) {
      const segs = segments(path);
      const before = getPath(out, segs);
      const change: ModifyChange = { path, op: "set", to: structuredClone(to) };
      if (before.found) change.from = before.value;
      setPath(out, segs, structuredClone(to));
      changes.push(change);
    }
    for (const path of spec.redact ?? []) {
      const segs = segments(path);
      if (!getPath(out, segs).found) continue;
      setPath(out, segs, REDACTED);
      changes.push({ path, op: "redact", to: REDACTED });
    }
    for (const [path, c] of Object.entries(spec.clamp ?? {})) {
      const segs = segments(path);
      const { found, value } = getPath(out, segs);
      if (!found) continue;
      let next: unknown = value;
      if (typeof value === "number") {
        next = Math.min(
          c.max ?? Number.POSITIVE_INFINITY,
          Math.max(c.min ?? Number.NEGATIVE_INFINITY, value),
        );
      } else if (typeof value === "string" && c.maxLength !== undefined && value.length > c.maxLength) {
        next = value.slice(0, c.maxLength);
      }
      if (next !== value) {
        setPath(out, segs, next);
        changes.push({ path, op: "clamp", from: value, to: next });
      }
    }
  }
  return { parameters: out, changes };
}
