// The journal's entry body formats have one source, the zod schemas: docs/journal.md's
// generated table and schemas/journal/*.schema.json are what `npm run schemas` writes from
// them (regenerated here in memory), and the member lists still written by hand in §4 name
// exactly the members the schemas have. A verifier written from the docs (e.g. one that
// rejects `warden.gate.decision` bodies with `risk_score`, as the old strict list implied)
// is caught here.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  DOC_BEGIN,
  DOC_END,
  journalRegistry,
  renderJournalDocTable,
  renderJournalSchemas,
} from "../../scripts/journal-schemas.js";
import { REPO_ROOT } from "../helpers/repo.js";

const DOC = join(REPO_ROOT, "docs", "journal.md");
const DIR = join(REPO_ROOT, "schemas", "journal");

function generatedBlock(doc: string): string {
  const start = doc.indexOf(DOC_BEGIN);
  const end = doc.indexOf(DOC_END);
  expect(start, "the BEGIN marker").toBeGreaterThanOrEqual(0);
  expect(end, "the END marker").toBeGreaterThan(start);
  return doc.slice(start, end + DOC_END.length);
}

/** Top-level member names of a `{a, b?, c: [...]}` list as the docs write it. */
function listed(list: string): string[] {
  const inner = list.trim().slice(1, -1);
  const names: string[] = [];
  let depth = 0;
  let cur = "";
  for (const ch of inner) {
    if ("{[(".includes(ch)) depth++;
    if ("}])".includes(ch)) depth--;
    if (ch === "," && depth === 0) {
      names.push(cur);
      cur = "";
    } else cur += ch;
  }
  names.push(cur);
  return names.map((n) => (n.trim().split(/[:?\s]/)[0] ?? "").trim()).filter((n) => n !== "");
}

describe("journal entry formats, from the zod schemas", () => {
  const registry = journalRegistry();

  it("schemas/journal holds exactly the generated JSON Schema of every entry type", () => {
    const expected = renderJournalSchemas(registry);
    expect(readdirSync(DIR).sort()).toEqual([...expected.keys()].sort());
    for (const [file, text] of expected) expect(readFileSync(join(DIR, file), "utf8"), file).toBe(text);
  });

  it("docs/journal.md's generated table is the one the schemas give", () => {
    expect(generatedBlock(readFileSync(DOC, "utf8"))).toBe(renderJournalDocTable(registry));
  });

  it("warden.gate.decision's documented members include risk_score (the drift the issue found)", () => {
    const block = generatedBlock(readFileSync(DOC, "utf8"));
    const row = block.split("\n").find((l) => l.startsWith("| [`warden.gate.decision`]"));
    expect(row).toMatch(/`risk_score\?`: number/);
    expect(row).toMatch(/\| strict \|/);
    const schema = JSON.parse(readFileSync(join(DIR, "warden.gate.decision.schema.json"), "utf8"));
    expect(Object.keys(schema.properties)).toContain("risk_score");
    expect(schema.additionalProperties).toBe(false);
  });

  it("every member list still written by hand in §4 names exactly the schema's members", () => {
    const doc = readFileSync(DOC, "utf8");
    const section = doc.slice(doc.indexOf("## 4. Event types"), doc.indexOf("### 4.1"));
    let checked = 0;
    for (const line of section.split("\n").filter((l) => l.startsWith("| `"))) {
      const [typesCell, schemaCell] = line.split("|").slice(1, 3);
      const types = [...(typesCell ?? "").matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
      const lists = [...(schemaCell ?? "").matchAll(/`(\{[^`]*\})`/g)].map((m) => m[1] as string);
      if (lists.length === 0) continue;
      expect(lists.length, line).toBe(types.length);
      types.forEach((type, i) => {
        const schema = JSON.parse(readFileSync(join(DIR, `${type}.schema.json`), "utf8"));
        expect(listed(lists[i] as string).sort(), type).toEqual(Object.keys(schema.properties).sort());
        checked++;
      });
    }
    expect(checked).toBeGreaterThan(0);
  });
});
