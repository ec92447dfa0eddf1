// Issue 37 finding 3: approvers locked out by strangers. The console's sign-in limit used
// to be global as well as per address: junk sign-ins from a handful of addresses spent
// the shared budget, and an approver signing in from elsewhere got 429. The limits are
// now per source address and per account, with backoff: strangers only limit themselves.
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SignInLimits } from "../../src/console/sign-in-limits.js";
import { ConsoleClient, type ConsoleSidecar, startConsoleSidecar, TOKENS } from "./harness.js";

let s: ConsoleSidecar;
beforeAll(async () => {
  s = await startConsoleSidecar({ signInPerMinute: 10 });
});
afterAll(async () => {
  await s.stop();
});

/** A sign-in POST from another loopback source address (127.0.0.N). */
function junkSignIn(from: string, token: string): Promise<number> {
  const url = new URL(`${s.url}/console/sign-in`);
  const body = new URLSearchParams({ token }).toString();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        localAddress: from,
        headers: { "content-type": "application/x-www-form-urlencoded", "content-length": body.length },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("approvers locked out by strangers", () => {
  it("junk sign-ins from eight other addresses do not stop an approver signing in", async () => {
    const statuses: number[] = [];
    for (let a = 2; a <= 9; a++)
      for (let i = 0; i < 12; i++)
        statuses.push(await junkSignIn(`127.0.0.${a}`, `junk-${a}-${i}-0123456789`));
    // Each stranger limited itself (429 after its own ten), nobody else.
    expect(statuses.filter((x) => x === 401)).toHaveLength(80);
    expect(statuses.filter((x) => x === 429)).toHaveLength(16);
    const approver = new ConsoleClient(s.url);
    expect(await approver.signIn(TOKENS.approver)).toBe(303);
    expect((await approver.request("/approvals")).status).toBe(200);
  });
});

describe("the sign-in limits", () => {
  it("limit each address with a doubling backoff, each account, and nothing shared", () => {
    let now = 0;
    const l = new SignInLimits(2, () => now);
    expect([l.admitAddress("a").ok, l.admitAddress("a").ok, l.admitAddress("a").ok]).toEqual([
      true,
      true,
      false,
    ]);
    // Another address is untouched by a's attempts; nothing is shared by every address.
    for (let i = 0; i < 100; i++) l.admitAddress(`x-${i}`);
    expect(l.admitAddress("b").ok).toBe(true);
    // Refused attempts back off: every two strikes in a row double the lock.
    now = 120_000;
    for (let i = 0; i < 4; i++) l.refused("c");
    const locked = l.admitAddress("c");
    expect(locked).toMatchObject({ ok: false });
    expect(locked.ok ? 0 : locked.retryAfterSeconds).toBeGreaterThanOrEqual(4);
    // A good credential clears the address; an account has its own bucket.
    now = 240_000;
    expect(l.admitAccount("c", "alice").ok).toBe(true);
    expect(l.admitAccount("d", "alice").ok).toBe(true);
    expect(l.admitAccount("e", "alice").ok).toBe(false);
    expect(l.admitAccount("e", "bob").ok).toBe(true);
  });
});
