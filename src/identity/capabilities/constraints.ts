// Parameter constraints of a capability token, in the YAML policy's parameter-match
// vocabulary (pattern, in, notIn, gt, gte, lt, lte, exists) plus `equals` (canonical JSON
// equality) and `maxLength`. Every constrained parameter must satisfy every operator of
// its constraint; a value of a type an operator cannot read (an object for `pattern`, a
// numeric string for `lte`) fails it. Patterns pass the policy layer's regex safety check
// when the token is issued and again when it is first checked.
import { z } from "zod";
import { canonicalJson } from "../../contracts/index.js";
import { compileSafeRegex, MAX_PATTERN_INPUT_LENGTH } from "../../policy/index.js";

const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);
const Scalar = z.union([z.string().max(4096), z.number(), z.boolean()]);

export const ParamConstraint = z
  .strictObject({
    equals: z.json().optional(),
    pattern: z.string().min(1).max(512).optional(),
    in: z.array(Scalar).min(1).max(1024).optional(),
    notIn: z.array(Scalar).min(1).max(1024).optional(),
    gt: z.number().optional(),
    gte: z.number().optional(),
    lt: z.number().optional(),
    lte: z.number().optional(),
    maxLength: z.number().int().nonnegative().optional(),
    exists: z.boolean().optional(),
  })
  .refine((o) => Object.keys(o).length > 0, "an empty parameter constraint");
export type ParamConstraint = z.infer<typeof ParamConstraint>;

export const Constraints = z
  .record(
    z
      .string()
      .min(1)
      .max(256)
      .refine((k) => !FORBIDDEN_KEYS.has(k), "__proto__, constructor and prototype are not allowed"),
    ParamConstraint,
  )
  .refine((o) => Object.keys(o).length <= 64, "at most 64 constrained parameters");
export type Constraints = z.infer<typeof Constraints>;

/** The first violated constraint: parameter and operator, never the value. */
export interface ConstraintViolation {
  param: string;
  op: string;
}

const compiled = new Map<string, RegExp>();

function regexOf(pattern: string): RegExp {
  let re = compiled.get(pattern);
  if (re === undefined) {
    re = compileSafeRegex(pattern, "capability constraint");
    if (compiled.size >= 1024) compiled.clear();
    compiled.set(pattern, re);
  }
  return re;
}

/** Throws the policy layer's coded error for an unsafe or invalid pattern (used when issuing). */
export function assertConstraintsSafe(c: Constraints): void {
  for (const k of Object.values(c)) if (k.pattern !== undefined) regexOf(k.pattern);
}

function scalarString(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  if (typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v))) return String(v);
  return undefined;
}

type Check = (v: unknown, k: ParamConstraint) => boolean;

const CHECKS: readonly [keyof ParamConstraint, Check][] = [
  ["equals", (v, k) => v !== undefined && canonicalJson(v) === canonicalJson(k.equals)],
  ["in", (v, k) => scalarInSet(v, k.in!) === true],
  ["notIn", (v, k) => scalarInSet(v, k.notIn!) === false],
  ["gt", (v, k) => isNum(v) && v > k.gt!],
  ["gte", (v, k) => isNum(v) && v >= k.gte!],
  ["lt", (v, k) => isNum(v) && v < k.lt!],
  ["lte", (v, k) => isNum(v) && v <= k.lte!],
  ["maxLength", (v, k) => typeof v === "string" && [...v].length <= k.maxLength!],
  [
    "pattern",
    (v, k) => {
      const s = scalarString(v);
      return s !== undefined && s.length <= MAX_PATTERN_INPUT_LENGTH && regexOf(k.pattern!).test(s);
    },
  ],
];

function isNum(v: unknown): v is number {
  return typeof v === "number" && Number.isFinite(v);
}

/** undefined when the value is not a readable scalar (fails both in and notIn). */
function scalarInSet(v: unknown, set: readonly (string | number | boolean)[]): boolean | undefined {
  const s = scalarString(v);
  return s === undefined ? undefined : set.some((x) => String(x) === s);
}

/** The first constraint the parameters break, or undefined when all hold. */
export function checkConstraints(
  constraints: Constraints,
  params: Readonly<Record<string, unknown>>,
): ConstraintViolation | undefined {
  for (const [param, k] of Object.entries(constraints)) {
    const v = Object.hasOwn(params, param) ? params[param] : undefined;
    if (k.exists !== undefined) {
      if ((v !== undefined) !== k.exists) return { param, op: "exists" };
      if (v === undefined) continue;
    }
    for (const [op, check] of CHECKS) {
      if (k[op] === undefined) continue;
      try {
        if (!check(v, k)) return { param, op };
      } catch {
        return { param, op }; // an unsafe pattern or a value canonical JSON refuses: fail closed
      }
    }
  }
  return undefined;
}
