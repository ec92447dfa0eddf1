// Writes the JSON Schema (draft 2020-12) of each of Warden's own wire records to
// schemas/<name>.schema.json, generated from the zod schemas with z.toJSONSchema.
// Output is deterministic (keys sorted recursively, two-space indent, trailing
// newline) so CI can regenerate in memory and compare with the checked-in files
// (test/contracts/schemas-in-sync.test.ts). Run: npm run schemas.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { z } from "zod";
import {
  AgentMessageEnvelopeSchema,
  HITLDecisionRecordSchema,
  LedgerEventSchema,
  PolicyDecisionRecordSchema,
  ReplayTraceSchema,
  ToolRequestEnvelopeSchema,
  ToolResponseEnvelopeSchema,
} from "../src/contracts/index.js";
import {
  ArtifactSchema,
  HOOK_EVENT_SCHEMAS,
  HookEventSchema,
  VerdictSchema,
  VersionCheckRequestSchema,
  VersionCheckResponseSchema,
} from "../src/hooks/index.js";
import { renderJournalDocTable, renderJournalSchemas, replaceDocBlock } from "./journal-schemas.js";
import { recordJsonSchema, sortKeys } from "./schema-json.js";

export { recordJsonSchema } from "./schema-json.js";

/** File stem -> schema, dare namespace (the form Warden produces). */
export const EXPORTED_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  "tool-request-envelope": ToolRequestEnvelopeSchema,
  "tool-response-envelope": ToolResponseEnvelopeSchema,
  "policy-decision-record": PolicyDecisionRecordSchema,
  "ledger-event": LedgerEventSchema,
  "replay-trace": ReplayTraceSchema,
  "agent-message-envelope": AgentMessageEnvelopeSchema,
  "hitl-decision-record": HITLDecisionRecordSchema,
};

/** File stem -> schema under schemas/aarts/: the AARTS data model (src/hooks, docs/hooks.md). */
export const AARTS_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  "version-check-request": VersionCheckRequestSchema,
  "version-check-response": VersionCheckResponseSchema,
  artifact: ArtifactSchema,
  verdict: VerdictSchema,
  event: HookEventSchema,
  ...Object.fromEntries(
    Object.entries(HOOK_EVENT_SCHEMAS).map(([point, schema]) => [`event-${point}`, schema]),
  ),
};

/** File name -> exact file contents, for every exported schema (AARTS ones: renderAartsSchemas). */
export function renderSchemas(
  schemas: Readonly<Record<string, z.ZodType>> = EXPORTED_SCHEMAS,
): Map<string, string> {
  const files = new Map<string, string>();
  for (const [name, schema] of Object.entries(schemas)) {
    files.set(`${name}.schema.json`, `${JSON.stringify(sortKeys(recordJsonSchema(schema)), null, 2)}\n`);
  }
  return files;
}

export function renderAartsSchemas(): Map<string, string> {
  return renderSchemas(AARTS_SCHEMAS);
}

export function writeSchemas(outDir: string): string[] {
  const written: string[] = [];
  for (const [dir, files] of [
    [outDir, renderSchemas()],
    [join(outDir, "aarts"), renderAartsSchemas()],
    [join(outDir, "journal"), renderJournalSchemas()],
  ] as const) {
    mkdirSync(dir, { recursive: true });
    for (const [file, text] of files) {
      const path = join(dir, file);
      writeFileSync(path, text);
      written.push(path);
    }
  }
  return written;
}

const invokedAs = process.argv[1];
if (invokedAs !== undefined && import.meta.url === pathToFileURL(resolve(invokedAs)).href) {
  const outDir = resolve(process.argv[2] ?? "schemas");
  for (const path of writeSchemas(outDir)) console.log(`wrote ${path}`);
  // The entry body table of docs/journal.md, between its markers, from the same schemas.
  const doc = resolve(outDir, "..", "docs", "journal.md");
  writeFileSync(doc, replaceDocBlock(readFileSync(doc, "utf8"), renderJournalDocTable()));
  console.log(`wrote ${doc} (the generated entry body table)`);
}
