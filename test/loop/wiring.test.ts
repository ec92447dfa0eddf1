import { describe, expect, it } from "vitest";
import { sha256Of, type TaintLabel } from "../../src/contracts/index.js";
import {
  type AuthorizeOutcome,
  type AuthorizingGate,
  classifyContract,
  contractCatalog,
  executorPort,
  gatePort,
} from "../../src/loop/index.js";
import { type CompiledTool, parseContract } from "../../src/tools/index.js";

function compile(text: string): CompiledTool {
  const r = parseContract(text);
  if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
  return r.tool;
}

const fetchPage = compile(
  `[tool]\nname = "fetch_page"\nversion = "1.0"\ndescription = "Fetch a page from the docs site"\n` +
    `[args.page]\ntype = "string"\nrequired = true\npattern = "^[a-z0-9-]{1,32}$"\n` +
    `[http]\nmethod = "GET"\nurl = "http://docs.local:8080/{page}.html"\n` +
    `[scope]\nallowed_hosts = ["docs.local"]\n` +
    `[output]\nformat = "text"\n[output.schema]\ntype = "string"\n`,
);
const listDir = compile(
  `[tool]\nname = "list_dir"\nversion = "1.0"\ndescription = "List a directory"\nbinary = "ls"\n` +
    `[args.dir]\ntype = "path"\nrequired = true\n` +
    `[command]\nexec = ["ls", "-1", "{dir}"]\n` +
    `[output]\nformat = "text"\n[output.schema]\ntype = "string"\n`,
);

const source = {
  tools: new Map([
    [fetchPage.name, fetchPage],
    [listDir.name, listDir],
  ]),
  get(name: string) {
    return this.tools.get(name);
  },
  names() {
    return [...this.tools.keys()];
  },
};

describe("contractCatalog", () => {
  const catalog = contractCatalog(source);

  it("shows the model names, descriptions and argument schemas, never URLs or commands", () => {
    const tools = catalog.modelTools();
    expect(tools.map((t) => t.name)).toEqual(["fetch_page", "list_dir"]);
    const text = JSON.stringify(tools);
    expect(text).not.toContain("docs.local");
    expect(text).not.toContain('"ls"');
    expect(tools[0]?.inputSchema).toMatchObject({ type: "object", required: ["page"] });
  });

  it("maps a valid call to the Gate request's class and action", () => {
    expect(catalog.resolve("fetch_page", { page: "intro" })).toEqual({
      ok: true,
      toolClass: "http",
      action: "get",
      tool: "fetch_page",
      parameters: { page: "intro" },
    });
    expect(classifyContract(listDir)).toEqual({ toolClass: "shell", action: "exec" });
  });

  it("refuses an unknown tool (including prototype names) with ERR_TOOL_UNKNOWN", () => {
    for (const name of ["delete_everything", "__proto__", "constructor", "toString"]) {
      expect(catalog.resolve(name, {})).toMatchObject({ ok: false, code: "ERR_TOOL_UNKNOWN" });
    }
  });

  it("refuses arguments the contract cannot express, with the contract's code", () => {
    expect(catalog.resolve("fetch_page", {})).toMatchObject({ ok: false, code: "ERR_TOOL_ARG_MISSING" });
    expect(catalog.resolve("fetch_page", { page: "../admin" })).toMatchObject({ ok: false });
    expect(catalog.resolve("fetch_page", { page: "a", host: "evil" })).toMatchObject({
      ok: false,
      code: "ERR_TOOL_ARG_UNKNOWN",
    });
    expect(catalog.resolve("list_dir", { dir: "../../etc" })).toMatchObject({
      ok: false,
      code: "ERR_TOOL_ARG_TRAVERSAL",
    });
    expect(catalog.resolve("list_dir", { dir: "a; rm -rf /" })).toMatchObject({ ok: false });
  });
});

describe("gatePort", () => {
  const taint: TaintLabel = { source: "web", origin: "http://127.0.0.1/p" };
  function fakeGate(outcome: Partial<AuthorizeOutcome<object>>, quarantined = false) {
    const recorded: unknown[] = [];
    const gate: AuthorizingGate<object> = {
      authorize: async () => ({
        decisionId: "d-1",
        decision: "deny",
        reasonCodes: ["taint_exfiltration"],
        matchedRules: [{ id: "no-exfil", reason: "tainted data may not leave" }, { id: "default" }],
        parameters: {},
        ...outcome,
      }),
      recordResult: async (id, r) => {
        recorded.push({ id, ...r });
      },
      sessions: { get: () => ({ quarantined }) },
    };
    return { gate, recorded };
  }
  const req = { principalId: "a", runId: "r", toolClass: "http", action: "post" };

  it("passes reason codes and rule reasons through, and the matched rules as policy ids", async () => {
    const v = await gatePort(fakeGate({}).gate).decide(req);
    expect(v).toEqual({
      decision: "deny",
      decisionId: "d-1",
      reasons: ["taint_exfiltration", "no-exfil: tainted data may not leave"],
      policyIds: ["no-exfil", "default"],
    });
  });

  it("reports a quarantined run and keeps the ticket only when the Gate gave one", async () => {
    const ticket = {};
    const v = await gatePort(fakeGate({ decision: "allow", ticket }, true).gate).decide(req);
    expect(v.quarantined).toBe(true);
    expect(v.ticket).toBe(ticket);
  });

  it("feeds executed output back to the Gate's session (taint and data for provenance)", async () => {
    const { gate, recorded } = fakeGate({});
    const h = sha256Of("x");
    await gatePort(gate).recordResult?.("d-1", {
      taintLabels: [taint],
      output: "page text",
      evidenceHash: h,
    });
    await gatePort(gate).recordResult?.("unrecorded", { taintLabels: [], output: null });
    expect(recorded).toEqual([{ id: "d-1", taintLabels: [taint], data: "page text", outputHash: h }]);
  });
});

describe("executorPort", () => {
  const evidence = { duration_ms: 12, output_hash: sha256Of("raw") };

  it("turns a governed success into an outcome with the evidence hash and taint", async () => {
    const taint: TaintLabel[] = [{ source: "web", origin: "x" }];
    const port = executorPort(async () => ({ ok: true, output: "hi", evidence, taint }));
    expect(await port.execute({})).toEqual({
      ok: true,
      output: "hi",
      taintLabels: taint,
      evidenceHash: sha256Of(evidence),
      durationMs: 12,
    });
  });

  it("passes a failure's code through and refuses tools no executor serves", async () => {
    const port = executorPort((t: { tool?: string }) =>
      t.tool === "x"
        ? Promise.resolve({ ok: false, code: "ERR_TICKET_FORGED", message: "forged" })
        : undefined,
    );
    expect(await port.execute({ tool: "x" })).toEqual({
      ok: false,
      code: "ERR_TICKET_FORGED",
      message: "forged",
    });
    expect(await port.execute({ tool: "y" })).toMatchObject({ ok: false, code: "ERR_LOOP_NO_EXECUTOR" });
  });
});
