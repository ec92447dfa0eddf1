// The probe call as an operator writes it (`warden conformance --probe JSON`): parsed once,
// bounded, a value rather than an exception. `textArg` must name one of the parameters.
import { z } from "zod";
import { parseStrictJson } from "../contracts/index.js";
import type { ProbeCall } from "./types.js";

const Name = z.string().min(1).max(256);

const ProbeSchema = z
  .strictObject({
    tool: Name,
    parameters: z.record(Name, z.json()).default({}),
    textArg: Name.optional(),
  })
  .refine((p) => p.textArg === undefined || typeof p.parameters[p.textArg] === "string", {
    message: "textArg must name a string parameter",
    path: ["textArg"],
  });

export type ProbeParse = { ok: true; probe: ProbeCall } | { ok: false; message: string };

export const MAX_PROBE_BYTES = 64 * 1024;

export function parseProbe(text: string): ProbeParse {
  if (text.length > MAX_PROBE_BYTES) return { ok: false, message: "the probe is larger than 64 KiB" };
  let value: unknown;
  try {
    value = parseStrictJson(text);
  } catch {
    return { ok: false, message: "the probe is not JSON" };
  }
  const r = ProbeSchema.safeParse(value);
  if (!r.success) {
    const i = r.error.issues[0];
    return { ok: false, message: `${i?.path.join(".") || "(root)"}: ${i?.message ?? "invalid"}` };
  }
  const { tool, parameters, textArg } = r.data;
  return { ok: true, probe: { tool, parameters, ...(textArg !== undefined ? { textArg } : {}) } };
}
