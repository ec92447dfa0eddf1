// Property tests over the trust arithmetic and the event-line parser.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  applyEvent,
  DEFAULT_TRUST_CONFIG,
  freshRow,
  parseEventLines,
  parseTrustConfig,
  TRUST_EVENTS,
  type TrustRow,
} from "../../src/trust/index.js";

const T0 = Date.parse("2026-03-01T00:00:00Z");
const event = fc.constantFrom(...TRUST_EVENTS);
const gap = fc.integer({ min: 0, max: 30 * 24 * 3_600_000 });
const config = fc
  .record({
    alpha: fc.double({ min: 0, max: 1, noNaN: true }),
    beta: fc.double({ min: 0, max: 1, noNaN: true }),
  })
  .map((c) => parseTrustConfig(c));

describe("trust arithmetic properties", () => {
  it("the score stays in [0, 1] for any sequence of events, gaps and alpha/beta", () => {
    fc.assert(
      fc.property(config, fc.array(fc.tuple(event, gap), { maxLength: 200 }), (cfg, steps) => {
        let row: TrustRow = freshRow("a", "b", T0, cfg);
        let now = T0;
        for (const [kind, dt] of steps) {
          now += dt;
          const t = applyEvent(row, kind, now, cfg, null);
          row = t.row;
          expect(row.score).toBeGreaterThanOrEqual(0);
          expect(row.score).toBeLessThanOrEqual(1);
          for (const s of t.steps) expect(s.after >= 0 && s.after <= 1).toBe(true);
        }
      }),
    );
  });

  it("a success never lowers the score, a negative event never raises it", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(event, fc.integer({ min: 0, max: 3_600_000 })), { maxLength: 150 }),
        (steps) => {
          let row = freshRow("a", "b", T0, DEFAULT_TRUST_CONFIG);
          let now = T0;
          for (const [kind, dt] of steps) {
            now += dt;
            const t = applyEvent(row, kind, now, DEFAULT_TRUST_CONFIG, null);
            const s = t.steps.find((x) => x.kind === kind);
            if (s === undefined) throw new Error("event step missing");
            if (kind === "task_success" || kind === "task_partial")
              expect(s.after).toBeGreaterThanOrEqual(s.before);
            else expect(s.after).toBeLessThanOrEqual(s.before);
            row = t.row;
          }
        },
      ),
    );
  });

  it("quarantine holds exactly while the score fell under the floor and until has not passed", () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 100 }), (kinds) => {
        let row = freshRow("a", "b", T0, DEFAULT_TRUST_CONFIG);
        kinds.forEach((kind, i) => {
          row = applyEvent(row, kind, T0 + i, DEFAULT_TRUST_CONFIG, null).row;
          if (row.status === "quarantined") expect(row.quarantineUntil).toBeGreaterThan(T0 + i);
          else expect(row.score).toBeGreaterThanOrEqual(DEFAULT_TRUST_CONFIG.quarantine_floor);
        });
      }),
    );
  });
});

describe("event line parser properties", () => {
  it("any text either parses into valid events or throws ERR_TRUST_EVENT_INVALID naming a line", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string(), fc.json()), { maxLength: 5 }), (lines) => {
        try {
          for (const e of parseEventLines(lines.join("\n"))) {
            expect(TRUST_EVENTS).toContain(e.event);
            expect(Number.isFinite(e.at)).toBe(true);
          }
        } catch (err) {
          expect(err).toMatchObject({
            code: "ERR_TRUST_EVENT_INVALID",
            message: expect.stringMatching(/^line \d+: /),
          });
        }
      }),
    );
  });

  it("well-formed lines round-trip", () => {
    const line = fc.record({
      time: fc
        .date({ min: new Date("2000-01-01"), max: new Date("2100-01-01"), noInvalidDate: true })
        .map((d) => d.toISOString()),
      subject: fc.string({ minLength: 1, maxLength: 40 }),
      event,
    });
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 20 }), (ls) => {
        const sorted = [...ls].sort((a, b) => a.time.localeCompare(b.time));
        const parsed = parseEventLines(sorted.map((l) => JSON.stringify(l)).join("\n"));
        expect(parsed.map((p) => [new Date(p.at).toISOString(), p.subject, p.event])).toEqual(
          sorted.map((l) => [l.time, l.subject, l.event]),
        );
      }),
    );
  });
});
