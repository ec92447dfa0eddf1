// `warden conformance` on the example deployment (what CI runs): every implemented check
// passes, the not-configured ones are listed with what is missing; the --json document's schema;
// usage errors exit 2.
import { describe, expect, it } from "vitest";
import { RESULTS } from "../../src/conformance/index.js";
import { runCli } from "../helpers/cli.js";
import { EXAMPLE } from "./deployment.js";
import { SummarySchema } from "./schema.js";

describe("warden conformance on the example deployment", () => {
  it("passes every implemented check of all four specifications (--json)", async () => {
    const r = await runCli("conformance", "--json");
    const s = SummarySchema.parse(JSON.parse(r.out));
    const failed = s.results.filter((x) => x.result === "fail");
    expect(failed, JSON.stringify(failed, null, 2)).toEqual([]);
    expect(r.code).toBe(0);
    expect(s.passed).toBe(true);
    expect(s.mode).toBe("library");
    expect(s.target).toBe(EXAMPLE);
    const ids = s.results.map((x) => x.id);
    for (const id of [
      "DARE-1",
      "DARE-2",
      "DARE-3",
      "DARE-4",
      "DARE-5",
      "C1",
      "C2",
      "C3",
      "C4",
      "C5",
      "C6",
      "C7",
    ])
      expect(s.results.find((x) => x.id === id)?.result, id).toBe("pass");
    expect(ids).toEqual(expect.arrayContaining(["E1", "E8", "AARTS-L1", "AARTS-L2", "AARTS-L3", "APAE-ECT"]));
    for (const k of RESULTS) expect(s.counts[k]).toBe(s.results.filter((x) => x.result === k).length);
    // A check that exists but whose feature this deployment does not turn on is labelled
    // not-configured (never "not implemented"), with what is missing; never a pass.
    const nc = s.results.filter((x) => x.result === "not-configured");
    expect(nc.map((x) => x.id)).toEqual(expect.arrayContaining(["E1", "E3", "E4", "APAE-ECT"]));
    for (const x of nc) expect(x.observed.length).toBeGreaterThan(10);
    expect(s.results.filter((x) => x.result === "not-implemented")).toEqual([]);
  }, 300_000);

  it("prints the pass table for the chosen specification", async () => {
    const r = await runCli("conformance", "--spec", "dare", "--config", EXAMPLE);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^dare\s+DARE-1\s+PASS/m);
    expect(r.out).toMatch(/5 checks: 5 pass, 0 fail, 0 not configured, 0 not implemented — PASS/);
    expect(r.out).not.toMatch(/oats|aarts/);
  }, 120_000);
});

describe("usage", () => {
  it("refuses an unknown specification", async () => {
    const r = await runCli("conformance", "--spec", "gdpr");
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--spec must be one of dare, oats, aarts, apae/);
  });

  it("refuses --config with --url", async () => {
    const r = await runCli("conformance", "--config", EXAMPLE, "--url", "http://127.0.0.1:1");
    expect(r.code).toBe(2);
  });

  it("refuses URL mode without the agent token", async () => {
    const saved = process.env.WARDEN_AGENT_TOKEN;
    delete process.env.WARDEN_AGENT_TOKEN;
    try {
      const r = await runCli("conformance", "--url", "http://127.0.0.1:1");
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/WARDEN_AGENT_TOKEN/);
    } finally {
      if (saved !== undefined) process.env.WARDEN_AGENT_TOKEN = saved;
    }
  });

  it("refuses a malformed --probe", async () => {
    const r = await runCli("conformance", "--probe", '{"tool": 3}');
    expect(r.code).toBe(2);
  });
});
