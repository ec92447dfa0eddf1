// Attacks on the sidecar's edge: missing, forged and confused credentials, principal
// spoofing in the body, runs of another principal, malformed and hostile bodies, and
// per-credential rate limits. Every rejection asserts its code and that nothing was
// decided (the journal did not grow).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isParsedGateRequest } from "../../src/contracts/index.js";
import { Authenticator, createSidecarServer, hashToken } from "../../src/server/index.js";
import { echo, type Sidecar, startTestSidecar, TOKENS } from "./harness.js";

let s: Sidecar;
beforeAll(async () => {
  s = await startTestSidecar();
});
afterAll(() => s.stop());

const journalSize = () => s.server.runtime.store.count();
const code = (r: { body: Record<string, unknown> }) => (r.body.error as { code?: string } | undefined)?.code;

describe("authentication", () => {
  it("refuses a call without a credential (401 ERR_AUTH_MISSING) and decides nothing", async () => {
    const before = await journalSize();
    const r = await s.call("/v1/execute", { body: echo("hi") });
    expect(r.status).toBe(401);
    expect(code(r)).toBe("ERR_AUTH_MISSING");
    expect(r.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(await journalSize()).toBe(before);
  });

  it("refuses an unknown token (401 ERR_AUTH_INVALID)", async () => {
    const r = await s.call("/v1/execute", { token: "token-agent-a-0123456788", body: echo("hi") });
    expect(r.status).toBe(401);
    expect(code(r)).toBe("ERR_AUTH_INVALID");
  });

  it("refuses the stored hash presented as if it were the token", async () => {
    const r = await s.call("/v1/decide", { token: hashToken(TOKENS.agentA), body: echo("hi") });
    expect(r.status).toBe(401);
    expect(code(r)).toBe("ERR_AUTH_INVALID");
  });

  it("refuses a non-Bearer Authorization scheme", async () => {
    const r = await s.call("/v1/decide", {
      headers: { authorization: `Basic ${Buffer.from(`agent-a:${TOKENS.agentA}`).toString("base64")}` },
      body: echo("hi"),
    });
    expect(r.status).toBe(401);
    expect(code(r)).toBe("ERR_AUTH_INVALID");
  });

  it("refuses two different credentials in one request", async () => {
    const r = await s.call("/v1/decide", {
      token: TOKENS.agentA,
      headers: { "x-api-key": TOKENS.agentB },
      body: echo("hi"),
    });
    expect(r.status).toBe(401);
    expect(code(r)).toBe("ERR_AUTH_INVALID");
  });

  it("accepts the token as an API key header", async () => {
    const r = await s.call("/v1/decide", {
      headers: { "x-api-key": TOKENS.agentA },
      body: echo("hi", { runId: await s.run("run-a") }),
    });
    expect(r.status).toBe(200);
    expect(r.body.decision).toBe("allow");
  });

  it("refuses an agent credential on the approval and journal routes (403 ERR_AUTH_FORBIDDEN)", async () => {
    for (const [path, body] of [
      ["/v1/approvals", undefined],
      ["/v1/approvals/x", { outcome: "approve", justification: "looks fine to me" }],
      ["/v1/journal", undefined],
      ["/v1/journal/head", undefined],
      ["/v1/journal/verify", {}],
      ["/metrics", undefined],
    ] as const) {
      const r = await s.call(path, { token: TOKENS.agentA, ...(body !== undefined ? { body } : {}) });
      expect([path, r.status, code(r)]).toEqual([path, 403, "ERR_AUTH_FORBIDDEN"]);
    }
  });

  it("refuses an approver credential on the agent routes: operators cannot act as agents", async () => {
    for (const path of ["/v1/execute", "/v1/decide"]) {
      const r = await s.call(path, { token: TOKENS.approver, body: echo("hi") });
      expect([path, r.status, code(r)]).toEqual([path, 403, "ERR_AUTH_FORBIDDEN"]);
    }
  });
});

describe("identities", () => {
  it("gives one frozen identity per credential: nothing downstream can change who a caller is", () => {
    const auth = new Authenticator(
      {
        principals: [{ id: "agent-a", tokenSha256: hashToken(TOKENS.agentA) }],
        approvers: [{ id: "alice", roles: ["approver"], tokenSha256: hashToken(TOKENS.approver) }],
      },
      () => ["agent"],
    );
    const a = auth.authenticate(`Bearer ${TOKENS.agentA}`, undefined);
    const b = auth.authenticate(undefined, TOKENS.agentA);
    if (!a.ok || !b.ok) throw new Error("not authenticated");
    expect(a.identity).toBe(b.identity);
    expect(a.identity).toMatchObject({ kind: "agent", id: "agent-a", roles: ["agent"] });
    expect(() => {
      (a.identity.roles as string[]).push("approver");
    }).toThrow(TypeError);
    expect(() => {
      (a.identity as { kind: string }).kind = "operator";
    }).toThrow(TypeError);
    const op = auth.authenticate(`Bearer ${TOKENS.approver}`, undefined);
    expect(op.ok && op.identity.kind).toBe("operator");
  });

  it("refuses to serve a route that does not declare who may call it", () => {
    const app = createSidecarServer(s.server.runtime).app;
    expect(() => app.get("/v1/undeclared", async () => ({}))).toThrow(/does not declare its access/);
  });
});

describe("principal from the credential only", () => {
  it("rejects a body naming another principal (403 ERR_AUTH_PRINCIPAL_MISMATCH) without a decision", async () => {
    const before = await journalSize();
    const r = await s.call("/v1/execute", {
      token: TOKENS.agentA,
      body: echo("hi", { principalId: "agent-b" }),
    });
    expect(r.status).toBe(403);
    expect(code(r)).toBe("ERR_AUTH_PRINCIPAL_MISMATCH");
    expect(await journalSize()).toBe(before);
  });

  it("accepts a body that names the authenticated principal", async () => {
    const r = await s.call("/v1/decide", {
      token: TOKENS.agentA,
      body: echo("hi", { principalId: "agent-a", runId: await s.run("run-a") }),
    });
    expect(r.status).toBe(200);
  });

  it("records decisions under the credential's principal", async () => {
    const runId = await s.run("run-b-1", TOKENS.agentB);
    const r = await s.call("/v1/decide", { token: TOKENS.agentB, body: echo("hi", { runId }) });
    expect(r.status).toBe(200);
    const [entry] = await s.server.runtime.store.query({ run_id: runId, type: "warden.gate.decision" });
    expect(entry?.body.principal_id).toBe("agent-b");
  });

  it("keeps another principal out of a run: no calls into it, no reading its state", async () => {
    const runIso = await s.run("run-iso");
    await s.call("/v1/decide", { token: TOKENS.agentA, body: echo("hi", { runId: runIso }) });
    const owner = s.server.runtime.gate.sessions.get(runIso)?.snapshot();
    const before = await journalSize();
    // Denied calls from agent-b would otherwise count towards agent-a's quarantine threshold.
    for (let i = 0; i < 6; i++) {
      const r = await s.call("/v1/decide", {
        token: TOKENS.agentB,
        body: echo("rm -rf /", { runId: runIso }),
      });
      // Another principal's run is answered exactly like an invented one (no probing).
      expect(r.status).toBe(404);
      expect(code(r)).toBe("ERR_RUN_UNKNOWN");
    }
    expect(await journalSize()).toBe(before);
    expect(s.server.runtime.gate.sessions.get(runIso)?.snapshot().counters).toEqual(owner?.counters);

    const peek = await s.call(`/v1/runs/${runIso}`, { token: TOKENS.agentB });
    expect(peek.status).toBe(404);
    expect(code(peek)).toBe("ERR_SERVER_RUN_NOT_FOUND");
    const own = await s.call(`/v1/runs/${runIso}`, { token: TOKENS.agentA });
    expect(own.status).toBe(200);
    expect(own.body.quarantined).toBe(false);
  });

  it("refuses relabelling a contract's action to reach a more permissive rule", async () => {
    const before = await journalSize();
    // publish is an http POST (needs approval); claiming "get" would match allow-get.
    const r = await s.call("/v1/execute", {
      token: TOKENS.agentA,
      body: {
        runId: await s.run("run-a"),
        tool: "publish",
        toolClass: "http",
        action: "get",
        parameters: { text: "x" },
      },
    });
    expect(r.status).toBe(400);
    expect(code(r)).toBe("ERR_SERVER_REQUEST_INVALID");
    expect(await journalSize()).toBe(before);
    expect(s.service.hits.filter((h) => h.method === "POST")).toHaveLength(0);
  });
});

describe("hostile bodies", () => {
  it("refuses a body over the size limit (413 ERR_SERVER_BODY_TOO_LARGE)", async () => {
    const r = await s.call("/v1/execute", { token: TOKENS.agentA, body: echo("x".repeat(1024 * 1024 + 10)) });
    expect(r.status).toBe(413);
    expect(code(r)).toBe("ERR_SERVER_BODY_TOO_LARGE");
  });

  it("refuses malformed JSON (400 ERR_JSON_SYNTAX)", async () => {
    const r = await s.call("/v1/execute", { token: TOKENS.agentA, raw: '{"runId": "run-a",' });
    expect(r.status).toBe(400);
    expect(code(r)).toBe("ERR_JSON_SYNTAX");
  });

  it("refuses an empty JSON body", async () => {
    const r = await s.call("/v1/execute", { token: TOKENS.agentA, raw: "" });
    expect(r.status).toBe(400);
    expect(["ERR_JSON_SYNTAX", "ERR_SERVER_BODY_MALFORMED"]).toContain(code(r));
  });

  it("refuses duplicate keys, which two parsers could read differently (400 ERR_JSON_DUPLICATE_KEY)", async () => {
    const r = await s.call("/v1/execute", {
      token: TOKENS.agentA,
      raw: '{"runId":"run-a","tool":"echo_tool","parameters":{"msg":"hi","msg":"rm -rf /"}}',
    });
    expect(r.status).toBe(400);
    expect(code(r)).toBe("ERR_JSON_DUPLICATE_KEY");
  });

  it("refuses __proto__ members (400 ERR_JSON_FORBIDDEN_KEY)", async () => {
    const r = await s.call("/v1/execute", {
      token: TOKENS.agentA,
      raw: '{"runId":"run-a","tool":"echo_tool","parameters":{"__proto__":{"admin":true},"msg":"hi"}}',
    });
    expect(r.status).toBe(400);
    expect(code(r)).toBe("ERR_JSON_FORBIDDEN_KEY");
  });

  it("refuses nesting deeper than the depth limit (400 ERR_CANON_TOO_DEEP)", async () => {
    const deep = `${'{"a":'.repeat(40)}1${"}".repeat(40)}`;
    const r = await s.call("/v1/decide", {
      token: TOKENS.agentA,
      raw: `{"runId":"run-a","tool":"echo_tool","parameters":{"msg":${deep}}}`,
    });
    expect(r.status).toBe(400);
    expect(code(r)).toBe("ERR_CANON_TOO_DEEP");
  });

  it("refuses a non-JSON media type (415 ERR_SERVER_MEDIA_TYPE)", async () => {
    const r = await s.call("/v1/execute", {
      token: TOKENS.agentA,
      raw: JSON.stringify(echo("hi")),
      headers: { "content-type": "text/plain" },
    });
    expect(r.status).toBe(415);
    expect(code(r)).toBe("ERR_SERVER_MEDIA_TYPE");
  });

  it("accepts application/json with a charset parameter", async () => {
    const r = await s.call("/v1/decide", {
      token: TOKENS.agentA,
      raw: JSON.stringify(echo("hi", { runId: await s.run("run-a") })),
      headers: { "content-type": "application/json; charset=utf-8" },
    });
    expect(r.status).toBe(200);
  });

  it("refuses unknown members and missing fields (400 ERR_SERVER_REQUEST_INVALID)", async () => {
    const extra = await s.call("/v1/execute", { token: TOKENS.agentA, body: { ...echo("hi"), admin: true } });
    expect(extra.status).toBe(400);
    expect(code(extra)).toBe("ERR_SERVER_REQUEST_INVALID");
    const missing = await s.call("/v1/decide", {
      token: TOKENS.agentA,
      body: { runId: "run-a", parameters: {} },
    });
    expect(missing.status).toBe(400);
    expect(code(missing)).toBe("ERR_SERVER_REQUEST_INVALID");
  });

  it("refuses null or mistyped principal, class and action instead of filling them in (400)", async () => {
    const before = await journalSize();
    for (const over of [
      { principalId: null },
      { principalId: 7 },
      { principalId: ["agent-a"] },
      { toolClass: null },
      { action: null },
      { toolClass: { name: "shell" } },
    ]) {
      const r = await s.call("/v1/decide", { token: TOKENS.agentA, body: echo("hi", over) });
      expect([over, r.status, code(r)]).toEqual([over, 400, "ERR_SERVER_REQUEST_INVALID"]);
    }
    for (const raw of ["[]", "null", '"text"', "3"]) {
      const r = await s.call("/v1/decide", { token: TOKENS.agentA, raw });
      expect([raw, r.status, code(r)]).toEqual([raw, 400, "ERR_SERVER_REQUEST_INVALID"]);
    }
    expect(await journalSize()).toBe(before);
  });

  it("hands the Gate one parsed, frozen request it does not parse again", async () => {
    const gate = s.server.runtime.gate;
    const seen: unknown[] = [];
    const evaluate = gate.evaluate;
    gate.evaluate = (request, ...rest) => {
      seen.push(request);
      return evaluate.call(gate, request, ...rest);
    };
    try {
      const r = await s.call("/v1/decide", {
        token: TOKENS.agentA,
        body: echo("hi", { runId: await s.run("run-p") }),
      });
      expect(r.status).toBe(200);
    } finally {
      gate.evaluate = evaluate;
    }
    const [request] = seen as { principalId: string; parameters: object }[];
    expect(isParsedGateRequest(request)).toBe(true);
    expect(request).toMatchObject({ principalId: "agent-a", toolClass: "shell", action: "exec" });
    expect(Object.isFrozen(request) && Object.isFrozen(request?.parameters)).toBe(true);
  });

  it("answers unknown routes with a JSON 404 (ERR_SERVER_NOT_FOUND)", async () => {
    const r = await s.call("/v1/nope", { token: TOKENS.agentA });
    expect(r.status).toBe(404);
    expect(code(r)).toBe("ERR_SERVER_NOT_FOUND");
  });
});

describe("rate limits", () => {
  it("limits each credential separately (429 ERR_SERVER_RATE_LIMITED with Retry-After)", async () => {
    const limited = await startTestSidecar({
      config: { limits: { rateLimitPerMinute: 3 } },
    });
    try {
      // Runs opened by the runtime directly, so the only requests counted are the calls below.
      const sessions = limited.server.runtime.gate.sessions;
      const runA = (await sessions.startRun("agent-a")).runId;
      const runB = (await sessions.startRun("agent-b")).runId;
      for (let i = 0; i < 3; i++) {
        const ok = await limited.call("/v1/decide", {
          token: TOKENS.agentA,
          body: echo(`m${i}`, { runId: runA }),
        });
        expect(ok.status).toBe(200);
      }
      const over = await limited.call("/v1/decide", {
        token: TOKENS.agentA,
        body: echo("m4", { runId: runA }),
      });
      expect(over.status).toBe(429);
      expect(code(over)).toBe("ERR_SERVER_RATE_LIMITED");
      expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
      const other = await limited.call("/v1/decide", {
        token: TOKENS.agentB,
        body: echo("m", { runId: runB }),
      });
      expect(other.status).toBe(200);
    } finally {
      await limited.stop();
    }
  });
});
