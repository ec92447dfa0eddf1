// The sidecar's `executors.process.sandbox` section (docs/sandbox.md): the default tier,
// a minimum tier per contract risk tier and per tool, resource limits, the bwrap binary,
// the container engine and the uid/gid tools run as. It becomes the process executor's
// SandboxOptions unchanged; `--check` reports settings the executor would refuse and any
// tier this machine cannot provide (a namespace tier without a working bwrap, a container
// tier without its engine), since such calls are refused at run time, never weakened.
import { isAbsolute } from "node:path";
import { z } from "zod";
import { RiskTierSchema } from "../contracts/index.js";
import {
  bwrapUnavailable,
  containerUnavailable,
  SANDBOX_TIERS,
  type SandboxOptions,
  type SandboxTier,
  sandboxConfigProblem,
} from "../executors/index.js";

const Tier = z.enum(SANDBOX_TIERS);
const AbsolutePath = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => isAbsolute(p), "must be an absolute path");
const Positive = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional();

const Limits = z.strictObject({
  cpuSeconds: Positive,
  memoryBytes: Positive,
  fileSizeBytes: Positive,
  openFiles: Positive,
  processes: Positive,
});

const ToolRequest = z.strictObject({
  tier: Tier.optional(),
  limits: Limits.optional(),
  /** Network destinations the tool may reach in the namespace/container tiers. */
  network: z.array(z.string().min(1).max(512)).max(64).optional(),
  /** Extra paths bound into the namespace/container (read-only unless writable). */
  paths: z
    .array(z.strictObject({ path: AbsolutePath, writable: z.boolean().optional() }))
    .max(64)
    .optional(),
});

export const SandboxSection = z.strictObject({
  tier: Tier.optional(),
  byRiskTier: z.partialRecord(RiskTierSchema, Tier).optional(),
  tools: z.record(z.string().min(1).max(128), ToolRequest).optional(),
  limits: Limits.optional(),
  bwrap: AbsolutePath.optional(),
  container: z
    .strictObject({
      engine: AbsolutePath,
      image: z.string().min(1).max(512),
      runtime: z.string().min(1).max(128).optional(),
    })
    .optional(),
  runAs: z
    .strictObject({
      uid: z.number().int().min(0).max(4_294_967_294),
      gid: z.number().int().min(0).max(4_294_967_294),
    })
    .optional(),
});
export type SandboxSection = z.infer<typeof SandboxSection>;

/** Drops absent members (exactOptionalPropertyTypes) recursively from parsed config. */
function clean<T>(v: T): T {
  if (Array.isArray(v)) return v.map(clean) as T;
  if (v === null || typeof v !== "object") return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = clean(x);
  return out as T;
}

/** The process executor's SandboxOptions for the section. */
export function sandboxOptions(s: SandboxSection): SandboxOptions {
  return clean(s) as SandboxOptions;
}

/** Every tier the section can select. */
function tiersUsed(s: SandboxSection): Set<SandboxTier> {
  const all = [
    s.tier,
    ...Object.values(s.byRiskTier ?? {}),
    ...Object.values(s.tools ?? {}).map((t) => t.tier),
  ];
  return new Set(all.filter((t): t is SandboxTier => t !== undefined));
}

/** `--check`: what the executor would refuse, and tiers this machine cannot provide. */
export function sandboxProblems(s: SandboxSection): { what: string; message: string }[] {
  const what = "executors.process.sandbox";
  const problems: { what: string; message: string }[] = [];
  const bad = sandboxConfigProblem(sandboxOptions(s));
  if (bad !== undefined) problems.push({ what, message: bad });
  const tiers = tiersUsed(s);
  if (tiers.has("namespace")) {
    const why = bwrapUnavailable(s.bwrap);
    if (why !== undefined) problems.push({ what, message: `the namespace tier is unavailable: ${why}` });
  }
  if (tiers.has("container")) {
    const why = containerUnavailable(sandboxOptions(s).container);
    if (why !== undefined) problems.push({ what, message: `the container tier is unavailable: ${why}` });
  }
  return problems;
}
