// Attacks on the journal through the Gate (issue 17 #8): every decision journaled its
// parameters verbatim, so an agent could make each denied call write megabytes into the
// signed, never-pruned journal.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, GateDecisionBody, sha256Of } from "../../src/contracts/index.js";
import { journaledParameters } from "../../src/gate/elide.js";
import { makeGate, req } from "./harness.js";

const POLICY = `
name: hygiene
version: "1.0"
rules:
  - id: allow-get
    name: reads
    priority: 100
    match: { toolClass: http, action: get }
    decision: allow
    reason: fine
  - id: redact-write
    name: writes are redacted
    priority: 110
    match: { toolClass: file, action: write }
    decision: modify
    modify: { redact: [token] }
    reason: no tokens in files
`;

describe("Gate attacks: journal bloat", () => {
  it("a denied call with 1 MB of parameters journals a hash, the size and a prefix, not the megabyte", async () => {
    const h = await makeGate({ yaml: POLICY });
    const big = { path: "/tmp/x", body: "A".repeat(1024 * 1024) };
    const o = await h.gate.authorize(req({ toolClass: "shell", action: "exec", parameters: big }));
    expect(o.decision).toBe("deny");
    const [d] = (await h.entries()).filter((e) => e.type === "warden.gate.decision");
    expect(d!.body.parameters).toEqual({});
    const elided = d!.body.parameters_elided as { sha256: string; bytes: number; prefix: string };
    expect(elided.sha256).toBe(sha256Of(big));
    expect(elided.bytes).toBe(Buffer.byteLength(canonicalJson(big)));
    expect(elided.prefix.length).toBeLessThanOrEqual(256);
    expect(canonicalJson(big).startsWith(elided.prefix)).toBe(true);
    expect(JSON.stringify(d!.body).length).toBeLessThan(8192);
    expect((await h.verify()).ok).toBe(true);
  });

  it("parameters under the cap are journaled verbatim", async () => {
    const h = await makeGate({ yaml: POLICY });
    await h.gate.authorize(req());
    const [d] = (await h.entries()).filter((e) => e.type === "warden.gate.decision");
    expect(d!.body.parameters).toEqual({ url: "https://example.org/" });
    expect(d!.body.parameters_elided).toBeUndefined();
  });

  it("a policy rewrite of oversized parameters is elided too", async () => {
    const h = await makeGate({ yaml: POLICY });
    const params = { path: "/tmp/x", content: "B".repeat(10_000), token: "t0k3n-secret-value" };
    const o = await h.gate.authorize(req({ toolClass: "file", action: "write", parameters: params }));
    expect(o.decision).toBe("modify");
    const [d] = (await h.entries()).filter((e) => e.type === "warden.gate.decision");
    const m = d!.body.modified as Record<string, unknown>;
    expect(m.parameters).toEqual({});
    expect((m.parameters_elided as { sha256: string }).sha256).toBe(sha256Of(o.parameters));
    expect(JSON.stringify(d!.body).length).toBeLessThan(8192);
  });

  it("the cap is an option", async () => {
    const h = await makeGate({ yaml: POLICY, gate: { journalParametersMaxBytes: 16 } });
    await h.gate.authorize(req());
    const [d] = (await h.entries()).filter((e) => e.type === "warden.gate.decision");
    expect(d!.body.parameters).toEqual({});
    expect((d!.body.parameters_elided as { prefix: string }).prefix).toBe('{"url":"https://');
  });
});

describe("journaledParameters", () => {
  it("keeps parameters within the cap and elides the rest faithfully (property)", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.jsonValue()),
        fc.integer({ min: 1, max: 2048 }),
        (params, cap) => {
          const text = canonicalJson(params);
          const bytes = Buffer.byteLength(text);
          const j = journaledParameters(params, cap);
          if (bytes <= cap) {
            expect(j).toEqual({ parameters: params });
          } else {
            expect(j.parameters).toEqual({});
            expect(j.parameters_elided).toMatchObject({ sha256: sha256Of(params), bytes });
            const prefix = j.parameters_elided!.prefix;
            expect(text.startsWith(prefix)).toBe(true);
            expect(prefix.length).toBeLessThanOrEqual(Math.min(256, cap));
            expect(Buffer.from(prefix, "utf8").toString("utf8")).toBe(prefix); // no half surrogate
          }
        },
      ),
    );
  });

  it("a decision entry that claims elision but still carries parameters is refused by the schema", async () => {
    const h = await makeGate({ yaml: POLICY, gate: { journalParametersMaxBytes: 16 } });
    await h.gate.authorize(req());
    const [d] = (await h.entries()).filter((e) => e.type === "warden.gate.decision");
    expect(GateDecisionBody.safeParse(d!.body).success).toBe(true);
    const forged = { ...d!.body, parameters: { url: "https://other.example/" } };
    expect(GateDecisionBody.safeParse(forged).success).toBe(false);
  });
});
