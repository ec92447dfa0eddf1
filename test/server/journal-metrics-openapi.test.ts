// Operator surfaces: journal listing with filters, the signed head and verification
// against it, Prometheus metrics, and the OpenAPI document (which must compile as JSON
// Schema and describe every route the server answers).
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyHead } from "../../src/journal/index.js";
import { echo, type Sidecar, startTestSidecar, TOKENS } from "./harness.js";

let s: Sidecar;
beforeAll(async () => {
  s = await startTestSidecar();
  await s.call("/v1/execute", { token: TOKENS.agentA, body: echo("one", { runId: await s.run("run-j") }) });
  await s.call("/v1/execute", {
    token: TOKENS.agentA,
    body: echo("rm two", { runId: await s.run("run-j") }),
  });
  await s.call("/v1/decide", {
    token: TOKENS.agentB,
    body: echo("three", { runId: await s.run("run-other") }),
  });
});
afterAll(() => s.stop());

const code = (r: { body: Record<string, unknown> }) => (r.body.error as { code?: string } | undefined)?.code;
type Entry = { seq: number; type: string; run_id: string | null; body: Record<string, unknown> };

describe("journal routes", () => {
  it("lists entries filtered by run, type and decision", async () => {
    // warden.gate.decision: one per decision whether or not the Gate also writes a separate DARE entry.
    const runJ = await s.run("run-j");
    const r = await s.call(`/v1/journal?run_id=${runJ}&type=warden.gate.decision`, { token: TOKENS.auditor });
    expect(r.status).toBe(200);
    const entries = r.body.entries as Entry[];
    expect(entries).toHaveLength(2);
    expect(entries.every((e) => e.run_id === runJ && e.type === "warden.gate.decision")).toBe(true);
    const denies = await s.call(`/v1/journal?run_id=${runJ}&decision=deny`, { token: TOKENS.auditor });
    expect((denies.body.entries as Entry[]).length).toBeGreaterThan(0);
    const last = await s.call("/v1/journal?order=desc&limit=1", { token: TOKENS.auditor });
    const all = await s.call("/v1/journal?limit=1000", { token: TOKENS.auditor });
    expect((last.body.entries as Entry[])[0]?.seq).toBe((all.body.entries as Entry[]).at(-1)?.seq);
  });

  it("refuses unknown filters and out-of-range limits (400 ERR_SERVER_REQUEST_INVALID)", async () => {
    for (const q of ["?sql=1", "?limit=0", "?limit=5000", "?since=yesterday", "?decision=maybe"]) {
      const r = await s.call(`/v1/journal${q}`, { token: TOKENS.auditor });
      expect([q, r.status, code(r)]).toEqual([q, 400, "ERR_SERVER_REQUEST_INVALID"]);
    }
  });

  it("signs the head, and verification against a kept head catches nothing amiss", async () => {
    const h = await s.call("/v1/journal/head", { token: TOKENS.auditor });
    expect(h.status).toBe(200);
    const pub = s.server.runtime.signer.publicKey;
    const checked = verifyHead(h.body.signed, (kid) =>
      kid === s.server.runtime.signer.keyId ? pub : undefined,
    );
    expect(checked.ok).toBe(true);
    expect((h.body.publicKey as { kty: string }).kty).toBe("OKP");
    await s.call("/v1/decide", { token: TOKENS.agentA, body: echo("four", { runId: await s.run("run-j") }) });
    const v = await s.call("/v1/journal/verify", {
      token: TOKENS.auditor,
      body: { expectHead: h.body.signed },
    });
    expect(v.status).toBe(200);
    expect(v.body).toMatchObject({ ok: true });
    expect(v.body.checked as number).toBeGreaterThan((h.body.head as { seq: number }).seq);
  });

  it("reports a forged head as a failed verification, not a server error", async () => {
    const h = await s.call("/v1/journal/head", { token: TOKENS.auditor });
    const signed = h.body.signed as Record<string, unknown>;
    const forged = { ...signed, seq: (signed.seq as number) + 1000 };
    const v = await s.call("/v1/journal/verify", { token: TOKENS.auditor, body: { expectHead: forged } });
    expect(v.status).toBe(200);
    expect(v.body.ok).toBe(false);
  });
});

describe("journal signatures (journal.signatures)", () => {
  type Signed = { seq: number; signature: string };
  const entries = async (on: Sidecar) =>
    (await on.call("/v1/journal?limit=1000", { token: TOKENS.auditor })).body.entries as Signed[];

  it("signs batches by default; every entry carries the batch signature and verifies offline", async () => {
    const all = await entries(s);
    expect(all.length).toBeGreaterThan(0);
    expect(all.every((e) => e.signature.startsWith("mt1."))).toBe(true);
    const v = await s.call("/v1/journal/verify", { token: TOKENS.auditor, body: {} });
    expect(v.body).toMatchObject({ ok: true, checked: all.length });
  });

  it("signs each entry on its own when configured entry", async () => {
    const e = await startTestSidecar({ journal: { signatures: "entry" } });
    try {
      const r = await e.call("/v1/decide", {
        token: TOKENS.agentA,
        body: echo("hi", { runId: await e.run("a") }),
      });
      expect(r.status).toBe(200);
      const all = await entries(e);
      expect(all.length).toBeGreaterThan(0);
      expect(all.every((x) => /^[A-Za-z0-9_-]{86}$/.test(x.signature))).toBe(true);
      const v = await e.call("/v1/journal/verify", { token: TOKENS.auditor, body: {} });
      expect(v.body).toMatchObject({ ok: true, checked: all.length });
    } finally {
      await e.stop();
    }
  });
});

describe("GET /metrics", () => {
  it("exposes decisions by verdict, the latency histogram, breakers and queue depth", async () => {
    expect((await s.call("/v1/nowhere", { token: TOKENS.auditor })).status).toBe(404);
    expect((await s.call("/v1/decide", { body: echo("x") })).status).toBe(401);
    const r = await s.call("/metrics", { token: TOKENS.auditor });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = r.body.text as string;
    expect(text).toMatch(/^warden_decisions_total\{decision="allow",endpoint="execute"\} [1-9]/m);
    expect(text).toMatch(/^warden_decisions_total\{decision="deny",endpoint="execute"\} [1-9]/m);
    expect(text).toMatch(/^warden_decisions_total\{decision="allow",endpoint="decide"\} [1-9]/m);
    const count = Number(/^warden_decision_duration_seconds_count (\d+)$/m.exec(text)?.[1]);
    const inf = Number(/^warden_decision_duration_seconds_bucket\{le="\+Inf"\} (\d+)$/m.exec(text)?.[1]);
    expect(count).toBeGreaterThanOrEqual(3);
    expect(inf).toBe(count);
    expect(text).toMatch(/^warden_breaker_state\{tool="echo_tool"\} 0$/m);
    expect(text).toMatch(/^warden_approvals_pending 0$/m);
    expect(text).toMatch(/^warden_deferred_pending 0$/m);
    // Every answer is counted, refusals and unknown routes included.
    expect(text).toMatch(/^warden_http_responses_total\{status="200"\} [1-9]/m);
    expect(text).toMatch(/^warden_http_responses_total\{status="401"\} [1-9]/m);
    expect(text).toMatch(/^warden_http_responses_total\{status="404"\} [1-9]/m);
    // Only the scrape itself is in flight: finished requests left the gauge.
    expect(text).toMatch(/^warden_http_in_flight 1$/m);
  });

  it("needs an operator credential unless configured public", async () => {
    const r = await s.call("/metrics");
    expect(r.status).toBe(401);
    expect(code(r)).toBe("ERR_AUTH_MISSING");
    const pub = await startTestSidecar({ config: { metrics: { public: true } } });
    try {
      expect((await pub.call("/metrics")).status).toBe(200);
    } finally {
      await pub.stop();
    }
  });
});

describe("GET /v1/openapi.json", () => {
  it("is OpenAPI 3.1 whose schemas compile and accept what the server accepts", async () => {
    const r = await s.call("/v1/openapi.json");
    expect(r.status).toBe(200);
    const doc = r.body as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, object> };
    };
    expect(doc.openapi).toBe("3.1.0");
    const ajv = new Ajv2020({ strict: false });
    // Refs are document-relative (#/components/schemas/...): compile against the components.
    const validate = ajv.compile({ components: doc.components, $ref: "#/components/schemas/CallBody" });
    expect(validate(echo("hi"))).toBe(true);
    expect(validate({ ...echo("hi"), admin: true })).toBe(false);
  });

  it("documents every route the server answers, and only those", async () => {
    const r = await s.call("/v1/openapi.json");
    const paths = (r.body as { paths: Record<string, Record<string, unknown>> }).paths;
    const documented = Object.entries(paths).flatMap(([p, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${p.replace(/\{(\w+)\}/g, ":$1")}`),
    );
    expect(documented.sort()).toEqual([...s.server.routes].sort());
  });
});
