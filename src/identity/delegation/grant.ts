// What a delegation link grants, and the narrowing rule between two links: a delegate
// holds at most what its delegator holds — tools (and through them capabilities), budgets,
// data classes and expiry — so a chain can only shrink authority on the way down.
// `widening` names the first field in which a link grants more than its delegator.
import { z } from "zod";

/**
 * A granted tool: a contract name (`mailer`), a class and action (`http:get`), a whole
 * class (`http:*`), or everything (`*`, meaningful only at the root).
 */
const ToolPattern = z
  .string()
  .min(1)
  .max(128)
  .regex(
    /^(\*|[A-Za-z0-9_][A-Za-z0-9_./-]*(:(\*|[A-Za-z0-9_][A-Za-z0-9_./-]*))?)$/,
    "a tool, class:action, class:* or *",
  );

const Budget = z.number().nonnegative().finite();

export const BUDGET_NAMES = ["toolCalls", "tokens", "cost", "wallTimeMs"] as const;

export const DelegatedGrant = z.strictObject({
  tools: z.array(ToolPattern).max(256),
  /** An absent budget is unlimited; a delegate cannot drop a limit its delegator has. */
  budgets: z
    .strictObject({
      toolCalls: Budget.int().optional(),
      tokens: Budget.int().optional(),
      cost: Budget.optional(),
      wallTimeMs: Budget.int().optional(),
    })
    .default({}),
  /** Data classifications the holder may handle (a set; no order is assumed). */
  dataClasses: z.array(z.string().min(1).max(64)).max(64),
  /** Seconds since the epoch. */
  expiresAt: z.number().int().positive(),
});
export type DelegatedGrant = z.infer<typeof DelegatedGrant>;
export type DelegatedGrantInput = z.input<typeof DelegatedGrant>;

export type GrantField = "tools" | `budgets.${(typeof BUDGET_NAMES)[number]}` | "dataClasses" | "expiresAt";

/** Whether `pattern` covers `want` (both tool patterns). */
export function toolCovers(pattern: string, want: string): boolean {
  if (pattern === "*" || pattern === want) return true;
  if (pattern.endsWith(":*")) {
    const cls = pattern.slice(0, -1); // "http:"
    return want.startsWith(cls) && want.length > cls.length;
  }
  return false;
}

/** Whether any of `tools` covers `want`. */
export function toolsCover(tools: readonly string[], want: string): boolean {
  return tools.some((p) => toolCovers(p, want));
}

/** A call's tool as the grant sees it: its contract name, or its class and action. */
export function callCovered(
  tools: readonly string[],
  call: { tool?: string | undefined; toolClass: string; action: string },
): boolean {
  return (
    (call.tool !== undefined && toolsCover(tools, call.tool)) ||
    toolsCover(tools, `${call.toolClass}:${call.action}`)
  );
}

/** The first field in which `child` grants more than `parent`, or undefined when it narrows. */
export function widening(parent: DelegatedGrant, child: DelegatedGrant): GrantField | undefined {
  for (const t of child.tools) if (!toolsCover(parent.tools, t)) return "tools";
  for (const b of BUDGET_NAMES) {
    const limit = parent.budgets[b];
    if (limit === undefined) continue;
    const mine = child.budgets[b];
    if (mine === undefined || mine > limit) return `budgets.${b}`;
  }
  const classes = new Set(parent.dataClasses);
  if (child.dataClasses.some((c) => !classes.has(c))) return "dataClasses";
  if (child.expiresAt > parent.expiresAt) return "expiresAt";
  return undefined;
}
