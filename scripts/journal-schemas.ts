// The journal's entry body formats from one source, the zod schemas the journal validates
// bodies with: every type a composed runtime registers (the built-in ones and each layer's
// register*EventTypes) becomes schemas/journal/<type>.schema.json and one row of the table
// between the markers in docs/journal.md. `npm run schemas` writes both;
// test/journal/docs-schemas.test.ts regenerates them in memory and fails when either differs.
import { registerConsoleEventTypes } from "../src/console/index.js";
import "../src/evidence/events.js"; // registers warden.evidence.bundle in the default registry
import { registerExecutorEventTypes } from "../src/executors/index.js";
import { registerGateEventTypes } from "../src/gate/index.js";
import { registerHookEventTypes } from "../src/hooks/index.js";
import { builtinEventTypes, defaultEventTypes, type EventTypeRegistry } from "../src/journal/index.js";
import { registerMemoryEventTypes } from "../src/memory/index.js";
import { registerMessageEventTypes } from "../src/messaging/index.js";
import { registerApaeLiftEventType } from "../src/runtime/apae-lift.js";
import { registerRuntimeEventTypes } from "../src/runtime/index.js";
import { registerEctLedgerEventType, registerTrustEventTypes } from "../src/trust/index.js";
import { recordJsonSchema, sortKeys } from "./schema-json.js";

export const DOC_BEGIN =
  "<!-- BEGIN GENERATED: journal entry bodies (npm run schemas, scripts/journal-schemas.ts); do not edit -->";
export const DOC_END = "<!-- END GENERATED: journal entry bodies -->";

/** Every journal entry type a composed runtime knows, with its body schema. */
export function journalRegistry(): EventTypeRegistry {
  const r = builtinEventTypes();
  registerGateEventTypes(r);
  registerRuntimeEventTypes(r);
  registerExecutorEventTypes(r);
  registerMessageEventTypes(r);
  registerMemoryEventTypes(r);
  registerHookEventTypes(r);
  registerTrustEventTypes(r);
  registerEctLedgerEventType(r);
  registerApaeLiftEventType(r);
  registerConsoleEventTypes(r);
  for (const t of defaultEventTypes.types()) {
    const s = defaultEventTypes.schemaOf(t);
    if (!r.has(t) && s !== undefined) r.register(t, s);
  }
  return r;
}

type Json = Record<string, unknown>;

function bodySchema(type: string, r: EventTypeRegistry): Json {
  const schema = r.schemaOf(type);
  if (schema === undefined) throw new Error(`no schema for ${type}`);
  return sortKeys(recordJsonSchema(schema, "input")) as Json;
}

/** File name -> contents: schemas/journal/<type>.schema.json for every entry type. */
export function renderJournalSchemas(r: EventTypeRegistry = journalRegistry()): Map<string, string> {
  const files = new Map<string, string>();
  for (const type of r.types()) {
    const schema = { title: `journal entry body: ${type}`, ...bodySchema(type, r) };
    files.set(`${type}.schema.json`, `${JSON.stringify(sortKeys(schema), null, 2)}\n`);
  }
  return files;
}

/** A member's type in a few words, from its JSON Schema. */
function typeOf(s: Json | undefined, depth = 0): string {
  if (s === undefined) return "any";
  if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join(" \\| ");
  if (s.const !== undefined) return JSON.stringify(s.const);
  const alts = (s.anyOf ?? s.oneOf) as Json[] | undefined;
  if (Array.isArray(alts)) return alts.map((a) => typeOf(a, depth)).join(" \\| ");
  if (s.type === "array") return `${typeOf(s.items as Json | undefined, depth + 1)}[]`;
  if (s.type === "object" && s.properties !== undefined && depth < 1) {
    const props = Object.keys(s.properties as Json);
    return `{${props.join(", ")}}`;
  }
  if (Array.isArray(s.type)) return s.type.join(" \\| ");
  return typeof s.type === "string" ? s.type : "any";
}

function members(schema: Json): string {
  const props = (schema.properties ?? {}) as Record<string, Json>;
  const required = new Set((schema.required ?? []) as string[]);
  const list = Object.keys(props).map((k) => `\`${k}${required.has(k) ? "" : "?"}\`: ${typeOf(props[k])}`);
  return list.length > 0 ? list.join("; ") : "(no members)";
}

/** The generated block of docs/journal.md, markers included. */
export function renderJournalDocTable(r: EventTypeRegistry = journalRegistry()): string {
  const rows = r.types().map((type) => {
    const s = bodySchema(type, r);
    const strict = s.additionalProperties === false ? "strict" : "open";
    return `| [\`${type}\`](../schemas/journal/${type}.schema.json) | ${strict} | ${members(s)} |`;
  });
  return [
    DOC_BEGIN,
    "",
    "Every registered entry type and its body's members (`?`: optional). **strict**: no other",
    "member is accepted (a verifier written from this table must reject one); **open**: other",
    "members are allowed. Each type links to its JSON Schema (draft 2020-12) in `schemas/journal/`.",
    "",
    "| type | body | members |",
    "| --- | --- | --- |",
    ...rows,
    "",
    DOC_END,
  ].join("\n");
}

/** `doc` with its generated block replaced by `block` (the markers must be there once). */
export function replaceDocBlock(doc: string, block: string): string {
  const start = doc.indexOf(DOC_BEGIN);
  const end = doc.indexOf(DOC_END);
  if (start < 0 || end < start || doc.indexOf(DOC_BEGIN, start + 1) >= 0)
    throw new Error("docs/journal.md must hold the generated block's BEGIN and END markers once");
  return `${doc.slice(0, start)}${block}${doc.slice(end + DOC_END.length)}`;
}
