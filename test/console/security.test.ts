// The console's own defences against a real sidecar: headers on every answer, the session
// cookie's flags, who may sign in, the sign-in rate limit, CSRF (missing, wrong, another
// session's, a signed-out session's, cross-origin), the live queue's stream, the audit
// entries, and the refusal table matching the server's.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONSOLE_CSP } from "../../src/console/index.js";
import { ERROR_CODES } from "../../src/contracts/error-codes.js";
import { ERROR_STATUS } from "../../src/server/index.js";
import { ConsoleClient, type ConsoleSidecar, startConsoleSidecar, TOKENS } from "./harness.js";

let s: ConsoleSidecar;
beforeAll(async () => {
  s = await startConsoleSidecar({ signInPerMinute: 40 });
});
afterAll(async () => {
  await s.stop();
});

const codeOf = (text: string) => /<code>(ERR_[A-Z_]+)<\/code>/.exec(text)?.[1];
const journaled = (type: string) => s.server.runtime.store.query({ type });

function expectHardened(h: Headers): void {
  expect(h.get("content-security-policy")).toBe(CONSOLE_CSP);
  expect(h.get("x-frame-options")).toBe("DENY");
  expect(h.get("x-content-type-options")).toBe("nosniff");
  expect(h.get("referrer-policy")).toBe("no-referrer");
}

describe("console headers and cookie", () => {
  it("every answer carries the strict CSP, DENY framing, nosniff and no-referrer (pages, errors, client files)", async () => {
    const c = new ConsoleClient(s.url);
    for (const path of [
      "/sign-in",
      "/static/console.js",
      "/static/console.css",
      "/no-such-page",
      "/approvals",
    ]) {
      const r = await c.request(path);
      expectHardened(r.headers);
    }
    await c.signIn(TOKENS.approver);
    expectHardened((await c.request("/approvals")).headers);
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).not.toContain("unsafe-inline");
    expect(CONSOLE_CSP).toContain("frame-ancestors 'none'");
  });

  it("no page carries inline script or inline style", async () => {
    const c = new ConsoleClient(s.url);
    await c.signIn(TOKENS.approver);
    for (const path of ["/sign-in", "/", "/approvals"]) {
      const { text } = await c.request(path);
      expect(text).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
      expect(text).not.toMatch(/\sstyle=|<style/);
      expect(text).not.toMatch(/\son[a-z]+=/);
    }
  });

  it("the session cookie is HttpOnly, SameSite=Strict, scoped to /console, and not Secure without TLS", async () => {
    const r = await fetch(`${s.url}/console/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: TOKENS.approver }).toString(),
      redirect: "manual",
    });
    expect(r.status).toBe(303);
    const cookie = r.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^warden_console=[A-Za-z0-9_-]{43};/);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Strict");
    expect(cookie).toContain("Path=/console");
    expect(cookie).not.toContain("Secure");
  });
});

describe("signing in", () => {
  it("an agent's token does not open the console, and the refusal is journaled", async () => {
    const c = new ConsoleClient(s.url);
    expect(await c.signIn(TOKENS.agent)).toBe(401);
    expect(c.cookie).toBeUndefined();
    const refused = await journaled("warden.console.sign_in_refused");
    expect(refused.at(-1)?.body).toMatchObject({ outcome: "refused", code: "ERR_CONSOLE_SIGN_IN_INVALID" });
    expect(JSON.stringify(refused)).not.toContain(TOKENS.agent);
  });

  it("an operator credential without the approver or auditor role does not open the console", async () => {
    const c = new ConsoleClient(s.url);
    expect(await c.signIn(TOKENS.operator)).toBe(401);
    expect((await journaled("warden.console.sign_in_refused")).at(-1)?.body).toMatchObject({
      principal_id: "olga",
    });
  });

  it("a sign-in is journaled with the roles, and a sign-out ends the session", async () => {
    const c = new ConsoleClient(s.url);
    expect(await c.signIn(TOKENS.auditor)).toBe(303);
    expect((await journaled("warden.console.sign_in")).at(-1)?.body).toMatchObject({
      principal_id: "audrey",
      roles: ["auditor"],
      outcome: "ok",
    });
    const cookie = c.cookie;
    const out = await c.request("/sign-out", { form: { csrf: c.csrf ?? "" } });
    expect(out.status).toBe(303);
    expect((await journaled("warden.console.sign_out")).at(-1)?.body).toMatchObject({
      principal_id: "audrey",
    });
    c.cookie = cookie;
    expect((await c.request("/")).status).toBe(303);
  });

  it("a client guessing tokens is rate limited (ERR_CONSOLE_SIGN_IN_LIMITED)", async () => {
    const limited = await startConsoleSidecar({ signInPerMinute: 3 });
    try {
      const c = new ConsoleClient(limited.url);
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push(await c.signIn(`guess-${i}-0123456789`));
      expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
      expect(statuses.slice(3)).toEqual([429, 429]);
      // The right token is refused too while the client is limited.
      const r = await c.request("/sign-in", { form: { token: TOKENS.approver } });
      expect(r.status).toBe(429);
      expect(codeOf(r.text)).toBe("ERR_CONSOLE_SIGN_IN_LIMITED");
    } finally {
      await limited.stop();
    }
  });
});

describe("CSRF and sessions on state changes", () => {
  const post = (c: ConsoleClient, form: Record<string, string>, headers: Record<string, string> = {}) =>
    c.request("/approvals/no-such-item", {
      form: { outcome: "approve", justification: "a forged approval", ...form },
      headers,
    });

  it("a POST without the CSRF token is refused (ERR_CONSOLE_CSRF)", async () => {
    const c = new ConsoleClient(s.url);
    await c.signIn(TOKENS.approver);
    const r = await post(c, {});
    expect(r.status).toBe(403);
    expect(codeOf(r.text)).toBe("ERR_CONSOLE_CSRF");
  });

  it("a POST with a wrong CSRF token is refused", async () => {
    const c = new ConsoleClient(s.url);
    await c.signIn(TOKENS.approver);
    const r = await post(c, { csrf: `${c.csrf ?? ""}x` });
    expect(codeOf(r.text)).toBe("ERR_CONSOLE_CSRF");
  });

  it("another session's CSRF token replayed with this session's cookie is refused", async () => {
    const mine = new ConsoleClient(s.url);
    const theirs = new ConsoleClient(s.url);
    await mine.signIn(TOKENS.approver);
    await theirs.signIn(TOKENS.approver2);
    const r = await post(mine, { csrf: theirs.csrf ?? "" });
    expect(codeOf(r.text)).toBe("ERR_CONSOLE_CSRF");
  });

  it("a signed-out session's cookie and CSRF token replayed are refused (ERR_CONSOLE_SESSION)", async () => {
    const c = new ConsoleClient(s.url);
    await c.signIn(TOKENS.approver);
    const { cookie, csrf } = c;
    await c.request("/sign-out", { form: { csrf: csrf ?? "" } });
    c.cookie = cookie;
    const r = await post(c, { csrf: csrf ?? "" });
    expect(r.status).toBe(401);
    expect(codeOf(r.text)).toBe("ERR_CONSOLE_SESSION");
  });

  it("a cross-origin POST with the right token is refused (Origin or Sec-Fetch-Site of another site)", async () => {
    const c = new ConsoleClient(s.url);
    await c.signIn(TOKENS.approver);
    const r1 = await post(c, { csrf: c.csrf ?? "" }, { origin: "http://evil.example" });
    expect(codeOf(r1.text)).toBe("ERR_CONSOLE_CSRF");
    const r2 = await post(c, { csrf: c.csrf ?? "" }, { "sec-fetch-site": "cross-site" });
    expect(codeOf(r2.text)).toBe("ERR_CONSOLE_CSRF");
    // With the right token from this origin, the request reaches the queue (which does not know the id).
    const r3 = await post(c, { csrf: c.csrf ?? "" }, { "sec-fetch-site": "same-origin" });
    expect(codeOf(r3.text)).toBe("ERR_APPROVAL_NOT_FOUND");
  });

  it("a form with a repeated field is refused (ERR_CONSOLE_FORM_INVALID)", async () => {
    const c = new ConsoleClient(s.url);
    await c.signIn(TOKENS.approver);
    const r = await fetch(`${s.url}/console/approvals/x`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: c.cookie ?? "" },
      body: `csrf=${c.csrf}&outcome=deny&outcome=approve&justification=twice+the+outcome`,
    });
    expect(r.status).toBe(400);
    expect(codeOf(await r.text())).toBe("ERR_CONSOLE_FORM_INVALID");
  });

  it("the console's pages need a session; a request without one is sent to sign in", async () => {
    const r = await new ConsoleClient(s.url).request("/");
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe("/console/sign-in");
    const q = await new ConsoleClient(s.url).request("/approvals/queue");
    expect(codeOf(q.text)).toBe("ERR_CONSOLE_SESSION");
  });
});

describe("the live queue", () => {
  it("streams server-sent events with the console's headers, and ends when the session does", async () => {
    const c = new ConsoleClient(s.url);
    await c.signIn(TOKENS.approver);
    const res = await fetch(`${s.url}/console/approvals/events`, { headers: { cookie: c.cookie ?? "" } });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    expectHardened(res.headers);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let seen = "";
    while (!seen.includes("event: queue")) seen += new TextDecoder().decode((await reader.read()).value);
    await c.request("/sign-out", { form: { csrf: c.csrf ?? "" } });
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
      seen += new TextDecoder().decode(chunk.value);
    }
    expect(seen).toContain("event: ended");
  });
});

describe("shutdown with open live queues", () => {
  it("closing the sidecar ends every live queue stream instead of waiting on it forever", async () => {
    const own = await startConsoleSidecar();
    const c = new ConsoleClient(own.url);
    await c.signIn(TOKENS.approver);
    const res = await fetch(`${own.url}/console/approvals/events`, { headers: { cookie: c.cookie ?? "" } });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    await own.stop(); // would never resolve while a stream held its connection open
    for (;;) if ((await reader.read().catch(() => ({ done: true }))).done) break;
  });

  it("the console's root answers with and without its trailing slash", async () => {
    for (const path of ["", "/"]) {
      const r = await fetch(`${s.url}/console${path}`, { redirect: "manual" });
      expect([r.status, r.headers.get("location")]).toEqual([303, "/console/sign-in"]);
    }
  });
});

describe("the refusal table", () => {
  it("every code the console answers with has its status in the server's single error table", () => {
    const answered = [...ERROR_CODES.console, "ERR_TRUST_LIFT_UNSIGNED", "ERR_TRUST_NOT_QUARANTINED"];
    for (const code of answered)
      expect([code, typeof (ERROR_STATUS as Record<string, number>)[code]]).toEqual([code, "number"]);
  });
});
