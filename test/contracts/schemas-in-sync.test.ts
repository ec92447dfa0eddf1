// The checked-in schemas/*.schema.json must be exactly what scripts/export-schemas.ts
// generates from the zod schemas today (regenerate with `npm run schemas`), and
// each must accept the records Warden builds.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import ajvFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { EXPORTED_SCHEMAS, renderSchemas } from "../../scripts/export-schemas.js";
import type { RecordKind } from "../../src/contracts/index.js";
import { REPO_ROOT } from "../helpers/repo.js";
import { samplesByKind } from "./records-samples.js";

const KIND_OF_FILE: Record<string, RecordKind> = {
  "tool-request-envelope.schema.json": "tool_request",
  "tool-response-envelope.schema.json": "tool_response",
  "policy-decision-record.schema.json": "policy_decision",
  "ledger-event.schema.json": "ledger_event",
  "replay-trace.schema.json": "replay_trace",
  "agent-message-envelope.schema.json": "agent_message",
  "hitl-decision-record.schema.json": "hitl_decision",
};

const rendered = renderSchemas();

describe("schemas/ is in sync with the zod schemas", () => {
  it("exports one schema per record kind", () => {
    expect([...rendered.keys()].sort()).toEqual(Object.keys(KIND_OF_FILE).sort());
    expect(Object.keys(EXPORTED_SCHEMAS)).toHaveLength(7);
  });

  for (const [file, text] of rendered) {
    it(`${file} matches the checked-in file (run \`npm run schemas\` after changing a record)`, () => {
      expect(readFileSync(join(REPO_ROOT, "schemas", file), "utf8")).toBe(text);
    });
  }

  it("renders deterministically", () => {
    expect(renderSchemas()).toEqual(rendered);
  });
});

describe("exported schemas accept the records Warden builds", () => {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  ajvFormats.default(ajv);
  const samples = samplesByKind();
  for (const [file, text] of rendered) {
    const kind = KIND_OF_FILE[file]!;
    it(file, () => {
      const validate = ajv.compile(JSON.parse(text) as object);
      for (const [, record] of samples[kind]) {
        validate(record);
        expect(validate.errors ?? []).toEqual([]);
      }
      expect(validate({ ...samples[kind][0]![1], unknown_field: 1 })).toBe(false);
    });
  }
});
