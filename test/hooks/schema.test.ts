// The AARTS data model: every hook point has a schema, events parse or are refused with a
// code (never a throw), and schemas/aarts/ is what `npm run schemas` generates.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import ajvFormats from "ajv-formats";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { renderAartsSchemas } from "../../scripts/export-schemas.js";
import { HOOK_POINTS, HOOK_TABLE, parseHookEvent, parseHookEventText } from "../../src/hooks/index.js";
import { REPO_ROOT } from "../helpers/repo.js";
import { ev, tool } from "./events.js";
import { BENIGN } from "./samples.js";

describe("AARTS data model", () => {
  it("defines the 20 hook points of §6.3 with their blocking mode and level", () => {
    expect(HOOK_POINTS).toHaveLength(20);
    expect(Object.keys(HOOK_TABLE).sort()).toEqual([...HOOK_POINTS].sort());
    expect(HOOK_TABLE.PreToolUse).toEqual({ blocking: "required", level: 1 });
    expect(HOOK_TABLE.SessionEnd.blocking).toBe("notification");
  });

  for (const point of HOOK_POINTS) {
    it(`parses a valid ${point} event`, () => {
      const r = parseHookEvent(BENIGN[point]);
      expect(r.ok, r.ok ? "" : r.message).toBe(true);
    });
  }

  it("refuses an unknown hook point with ERR_HOOK_POINT_UNKNOWN", () => {
    expect(parseHookEvent(ev("PreToolUse", { hook_point: "PreTeleport" }))).toMatchObject({
      ok: false,
      code: "ERR_HOOK_POINT_UNKNOWN",
    });
  });

  it("refuses events missing a MUST field, with a bad host_id, or not objects", () => {
    const { session_id: _s, ...noSession } = BENIGN.PreToolUse;
    for (const bad of [noSession, { ...BENIGN.PreToolUse, host_id: "Claude Code" }, [], "x", null, 3]) {
      expect(parseHookEvent(bad)).toMatchObject({ ok: false, code: "ERR_HOOK_EVENT_INVALID" });
    }
  });

  it("refuses tool_name other without tool_name_native (§6.2.2)", () => {
    expect(parseHookEvent(tool("other", {}))).toMatchObject({ ok: false, code: "ERR_HOOK_EVENT_INVALID" });
    expect(parseHookEvent(tool("other", {}, "Frobnicate")).ok).toBe(true);
  });

  it("a JSON text with a duplicate key or __proto__ is refused, not merged", () => {
    expect(parseHookEventText('{"hook_point":"SessionStart","hook_point":"SessionEnd"}')).toMatchObject({
      ok: false,
      code: "ERR_HOOK_EVENT_INVALID",
    });
    expect(parseHookEventText('{"__proto__":{"x":1}}')).toMatchObject({ ok: false });
  });

  it("property: the parser is total: any value or text gives ok or a coded refusal", () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.jsonValue()), (v) => {
        const r = parseHookEvent(v);
        if (!r.ok) expect(["ERR_HOOK_EVENT_INVALID", "ERR_HOOK_POINT_UNKNOWN"]).toContain(r.code);
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.string(), (s) => {
        const r = parseHookEventText(s);
        expect(typeof r.ok).toBe("boolean");
      }),
      { numRuns: 300 },
    );
  });

  it("property: extra host fields never break a valid event, and a wrong envelope type always does", () => {
    const points = fc.constantFrom(...HOOK_POINTS);
    const extra = fc.dictionary(
      fc.string({ minLength: 1 }).map((k) => `x_${k}`),
      fc.jsonValue(),
      { maxKeys: 4 },
    );
    fc.assert(
      fc.property(points, extra, (p, more) => {
        expect(parseHookEvent({ ...BENIGN[p], ...more }).ok).toBe(true);
        expect(parseHookEvent({ ...BENIGN[p], timestamp: 12 }).ok).toBe(false);
      }),
      { numRuns: 200 },
    );
  });
});

describe("schemas/aarts is in sync with the zod schemas", () => {
  const rendered = renderAartsSchemas();
  for (const [file, text] of rendered) {
    it(`${file} matches (run \`npm run schemas\` after changing src/hooks/schema*.ts)`, () => {
      expect(readFileSync(join(REPO_ROOT, "schemas", "aarts", file), "utf8")).toBe(text);
    });
  }

  it("the exported event schema accepts every sample and refuses an unknown hook point", () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    ajvFormats.default(ajv);
    const validate = ajv.compile(JSON.parse(rendered.get("event.schema.json") as string));
    for (const p of HOOK_POINTS)
      expect(validate(BENIGN[p]), `${p}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    expect(validate({ ...BENIGN.PreToolUse, hook_point: "PreTeleport" })).toBe(false);
  });
});
