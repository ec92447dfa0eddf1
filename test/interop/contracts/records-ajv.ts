// Ajv (draft 2020-12, formats on, strict mode) over the GATE contract schemas in
// the vectors directory (gate/schemas), keyed by record kind.
import { readdirSync } from "node:fs";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import ajvFormats from "ajv-formats";
import type { RecordKind } from "../../../src/contracts/index.js";
import { readVectorJson, vectorPath } from "../vectors.js";

export const GATE_SCHEMA_FILE: Record<RecordKind, string> = {
  tool_request: "tool_envelope.schema.json",
  tool_response: "tool_envelope.schema.json",
  policy_decision: "policy_decision_record.schema.json",
  ledger_event: "audit_ledger_event.schema.json",
  agent_message: "multi_agent_envelope.schema.json",
  replay_trace: "replay_trace.schema.json",
  hitl_decision: "hitl_decision_record.schema.json",
};

// Strict mode stays on so a schema keyword Ajv does not know fails loudly;
// "version" is GATE's own annotation keyword.
const ajv = new Ajv2020({ strict: true, allErrors: true });
// ajv-formats is CommonJS; under NodeNext its default import is module.exports.
ajvFormats.default(ajv);
ajv.addKeyword({ keyword: "version", schemaType: "string" });

const validators = new Map(
  readdirSync(vectorPath("gate", "schemas"))
    .filter((f) => f.endsWith(".schema.json"))
    .map((f) => [f, ajv.compile(readVectorJson("gate", "schemas", f) as object)]),
);

export function gateValidator(kind: RecordKind): ValidateFunction {
  const v = validators.get(GATE_SCHEMA_FILE[kind]);
  if (v === undefined) throw new Error(`missing GATE schema for ${kind}`);
  return v;
}
