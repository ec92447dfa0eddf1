import { describe, expect, it } from "vitest";
import { ExecutionTicket, redeemTicket } from "../../src/gate/ticket.js";

const grant = {
  decisionId: "0192f3a4-7b1c-7d2e-8f90-a1b2c3d4e5f6",
  runId: "run-1",
  principalId: "agent",
  toolClass: "http",
  action: "get",
  tool: "fetch",
  parameters: { url: "https://example.org/", headers: { a: "b" } },
};

describe("execution tickets", () => {
  it("redeems once with the authorised parameters", () => {
    const t = ExecutionTicket.mint(grant);
    const r = redeemTicket(t, { tool: "fetch" });
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.parameters).toEqual(grant.parameters);
  });

  it("cannot be reused", () => {
    const t = ExecutionTicket.mint(grant);
    expect(redeemTicket(t).ok).toBe(true);
    const again = redeemTicket(t);
    expect(again).toMatchObject({ ok: false, code: "ERR_TICKET_REUSED" });
  });

  it("cannot be forged: structural copies, prototype tricks and JSON round trips are rejected", () => {
    const t = ExecutionTicket.mint(grant);
    const copy = { ...t };
    const proto = Object.assign(Object.create(ExecutionTicket.prototype), grant);
    const json = JSON.parse(JSON.stringify(t));
    for (const fake of [copy, proto, json, null, undefined, "ticket", 42]) {
      expect(redeemTicket(fake)).toMatchObject({ ok: false, code: "ERR_TICKET_FORGED" });
    }
    expect(JSON.stringify(t)).toContain('"redeemable":false');
  });

  it("cannot be altered: parameters are deeply frozen and rebinding fails", () => {
    const t = ExecutionTicket.mint(grant);
    expect(() => {
      (t.parameters as Record<string, unknown>).url = "https://evil.example/";
    }).toThrow(TypeError);
    expect(() => {
      ((t.parameters as Record<string, Record<string, unknown>>).headers as Record<string, unknown>).a = "x";
    }).toThrow(TypeError);
    expect(() => {
      (t as unknown as { tool: string }).tool = "other";
    }).toThrow(TypeError);
    // The grant object given to mint is copied, so mutating it afterwards changes nothing.
    const g = structuredClone(grant);
    const t2 = ExecutionTicket.mint(g);
    g.parameters.url = "https://evil.example/";
    const r = redeemTicket(t2);
    expect(r.ok && r.parameters.url).toBe("https://example.org/");
  });

  it("expires", () => {
    const t = ExecutionTicket.mint({ ...grant, ttlMs: 1000, now: 0 });
    expect(redeemTicket(t, { now: 1001 })).toMatchObject({ ok: false, code: "ERR_TICKET_EXPIRED" });
    expect(redeemTicket(t, { now: 10 })).toMatchObject({ ok: false, code: "ERR_TICKET_REUSED" });
  });

  it("is bound to its tool", () => {
    const t = ExecutionTicket.mint(grant);
    expect(redeemTicket(t, { tool: "shell-exec" })).toMatchObject({
      ok: false,
      code: "ERR_TICKET_WRONG_TOOL",
    });
    expect(redeemTicket(t, { toolClass: "shell" })).toMatchObject({
      ok: false,
      code: "ERR_TICKET_WRONG_TOOL",
    });
    expect(redeemTicket(t, { tool: "fetch", toolClass: "http" }).ok).toBe(true);
  });
});
