// The `message:` part of a YAML rule's match (OATS §10.1, the communication gate): who
// may talk to whom, with which primitive, which payload types, at which delegation depth.
// Kept apart from the tool-call conditions: a rule without `message:` compiles exactly as
// before, and a rule with it never matches a tool call (the input carries no message).
import { z } from "zod";
import type { EvalContext } from "./eval-context.js";
import type { Condition } from "./yaml-match.js";

const Name = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_][A-Za-z0-9_.:@/-]*$/, "letters, digits and _ . : @ / - only");
const NameOrList = z.union([Name, z.array(Name).min(1).max(1024)]);
const Depth = z
  .strictObject({
    eq: z.int().min(0).optional(),
    lt: z.int().min(0).optional(),
    lte: z.int().min(0).optional(),
    gt: z.int().min(0).optional(),
    gte: z.int().min(0).optional(),
  })
  .refine((o) => Object.keys(o).length > 0, "at least one of eq, gt, gte, lt, lte");

export const MessageMatch = z
  .strictObject({
    from: NameOrList.optional(),
    to: NameOrList.optional(),
    primitive: z
      .union([
        z.enum(["ask", "delegate", "send", "parallel", "race"]),
        z.array(z.enum(["ask", "delegate", "send", "parallel", "race"])).min(1),
      ])
      .optional(),
    payloadType: z
      .union([
        z.enum(["delegate_task", "return_result", "status_update", "escalation"]),
        z.array(z.enum(["delegate_task", "return_result", "status_update", "escalation"])).min(1),
      ])
      .optional(),
    depth: Depth.optional(),
  })
  .meta({ description: "Matches an inter-agent message (never a tool call)." });
export type MessageMatch = z.infer<typeof MessageMatch>;

const asSet = (v: string | string[]): ReadonlySet<string> => new Set(Array.isArray(v) ? v : [v]);

type Field = "from" | "to" | "primitive" | "payloadType";

/** The conditions of a rule's `message:` match; each is false on an input without a message. */
export function compileMessageMatch(m: MessageMatch): Condition[] {
  const out: Condition[] = [{ name: "message", test: (c: EvalContext) => c.input.message !== undefined }];
  for (const f of ["from", "to", "primitive", "payloadType"] as const satisfies readonly Field[]) {
    const want = m[f];
    if (want === undefined) continue;
    const set = asSet(want);
    out.push({
      name: `message.${f}`,
      test: (c) => c.input.message !== undefined && set.has(c.input.message[f]),
    });
  }
  const d = m.depth;
  if (d !== undefined) {
    out.push({
      name: "message.depth",
      test: (c) => {
        const v = c.input.message?.depth;
        return (
          v !== undefined &&
          (d.eq === undefined || v === d.eq) &&
          (d.lt === undefined || v < d.lt) &&
          (d.lte === undefined || v <= d.lte) &&
          (d.gt === undefined || v > d.gt) &&
          (d.gte === undefined || v >= d.gte)
        );
      },
    });
  }
  return out;
}
