// The --json document of `warden conformance`, as CI reads it.
import { z } from "zod";
import { RESULTS, SPECS } from "../../src/conformance/index.js";

const ResultSchema = z.strictObject({
  spec: z.enum(SPECS),
  id: z.string().min(1),
  title: z.string().min(1),
  section: z.string().min(1),
  result: z.enum(RESULTS),
  observed: z.string().min(1),
});

export const SummarySchema = z.strictObject({
  target: z.string().min(1),
  mode: z.enum(["library", "url"]),
  specs: z.array(z.enum(SPECS)).min(1),
  results: z.array(ResultSchema).min(1),
  counts: z.strictObject({
    pass: z.number().int(),
    fail: z.number().int(),
    "not-configured": z.number().int(),
    "not-implemented": z.number().int(),
  }),
  passed: z.boolean(),
});
