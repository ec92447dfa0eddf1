// Notifiers as an attacker meets them: the agent controls the parameters a notice shows
// (markup, look-alike letters, bidi and zero-width characters, Slack control sequences), a
// notifier endpoint may hang or fail, and anyone may post a forged notice to the receiver.
// What must hold: the receiver can tell a real notice by its signature, agent text is
// visible as text and cannot format, mention or link, and a failing endpoint is retried and
// journaled without anything waiting on it.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type Notice, Notifier, signNotice, visibleAgentText } from "../../src/executors/index.js";

const SECRET = "a-shared-webhook-secret-0123456789";

interface Hit {
  headers: IncomingMessage["headers"];
  body: string;
}

let servers: Server[] = [];
afterEach(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  servers = [];
});

/** A loopback receiver; `answer` picks each response's status (or hangs on 0). */
async function receiver(answer: (n: number) => number): Promise<{ url: string; hits: Hit[] }> {
  const hits: Hit[] = [];
  const s = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString("utf8");
    });
    req.on("end", () => {
      hits.push({ headers: req.headers, body });
      const status = answer(hits.length);
      if (status === 0) return; // hang
      res.statusCode = status;
      res.end("ok");
    });
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/hook`, hits };
}

function journal() {
  const entries: { type: string; body: Record<string, unknown> }[] = [];
  return { entries, append: async (e: { type: string; body: Record<string, unknown> }) => entries.push(e) };
}

const HOSTILE: Notice = {
  kind: "approval_pending",
  decisionId: "dec-1",
  runId: "run-1",
  principalId: "agent-a",
  tool: "send_note",
  parameters: {
    to: "ceo@p\u0430ypal.com",
    text: "<img src=x onerror=alert(1)> ```<!channel> <https://evil.example|click here>``` invoice\u202Eexe.pdf zero\u200Bwidth",
  },
  reasonCodes: ["RULE:approve-notes"],
  link: "https://warden.example/console/a/TOKEN",
};

describe("notifiers", () => {
  it("a receiver verifies the HMAC signature; a forged or altered notice does not verify", async () => {
    const r = await receiver(() => 200);
    const j = journal();
    const n = new Notifier({
      targets: [{ name: "ops", kind: "webhook", url: r.url, secret: SECRET }],
      journal: j,
    });
    n.notify(HOSTILE);
    await n.settle();
    const hit = r.hits[0];
    if (hit === undefined) throw new Error("no notice received");
    const ts = String(hit.headers["x-warden-timestamp"]);
    expect(hit.headers["x-warden-signature"]).toBe(`v1=${signNotice(SECRET, ts, hit.body)}`);
    expect(signNotice(SECRET, ts, hit.body.replace("send_note", "drop_table"))).not.toBe(
      String(hit.headers["x-warden-signature"]).slice(3),
    );
    expect(signNotice("attacker-guessed-secret-000000", ts, hit.body)).not.toBe(
      String(hit.headers["x-warden-signature"]).slice(3),
    );
    const body = JSON.parse(hit.body) as Record<string, unknown>;
    expect(body).toMatchObject({
      kind: "approval_pending",
      decision_id: "dec-1",
      parameters: { agent_controlled: true },
    });
    expect(JSON.stringify(body)).not.toContain("rationale");
    expect(j.entries).toMatchObject([
      { type: "warden.notify.delivery", body: { ok: true, final: true, attempt: 1 } },
    ]);
  });

  it("look-alike, bidi and zero-width characters in agent text are shown as visible code points", () => {
    const t = visibleAgentText(JSON.stringify(HOSTILE.parameters));
    expect(t).toContain("p⟦U+0430 а⟧ypal");
    expect(t).toContain("⟦U+202E⟧");
    expect(t).toContain("⟦U+200B⟧");
    expect(t).not.toContain("\u202E");
    expect(t).not.toContain("\u200B");
  });

  it("in the Slack payload agent text cannot close its code block, mention a channel or make a link", async () => {
    const r = await receiver(() => 200);
    const n = new Notifier({ targets: [{ name: "chat", kind: "slack", url: r.url }], journal: journal() });
    n.notify(HOSTILE);
    await n.settle();
    const payload = JSON.parse(r.hits[0]?.body ?? "{}") as { blocks: { text: { text: string } }[] };
    const text = payload.blocks[0]?.text.text ?? "";
    const agentPart = text.slice(text.indexOf("```") + 3, text.lastIndexOf("```"));
    expect(agentPart).not.toContain("`");
    expect(agentPart).not.toContain("<!channel>");
    expect(agentPart).toContain("&lt;!channel&gt;");
    expect(agentPart).not.toMatch(/<https?:/);
    expect(agentPart).toContain("&lt;img src=x");
    // The only live link is Warden's own approval link.
    expect(text.match(/<https?:[^>]*>/g)).toEqual([
      "<https://warden.example/console/a/TOKEN|Open the approval page>",
    ]);
  });

  it("an endpoint answering 500 is retried with backoff, every attempt journaled, until it answers", async () => {
    const r = await receiver((n) => (n < 3 ? 500 : 204));
    const j = journal();
    const n = new Notifier({
      targets: [{ name: "ops", kind: "webhook", url: r.url, secret: SECRET }],
      journal: j,
      backoffMs: 10,
    });
    n.notify(HOSTILE);
    await n.settle();
    expect(r.hits).toHaveLength(3);
    expect(j.entries.map((e) => [e.body.attempt, e.body.ok, e.body.status, e.body.final])).toEqual([
      [1, false, 500, false],
      [2, false, 500, false],
      [3, true, 204, true],
    ]);
  });

  it("an endpoint that hangs never blocks the caller: notify returns at once, attempts time out and are journaled", async () => {
    const r = await receiver(() => 0);
    const j = journal();
    const n = new Notifier({
      targets: [{ name: "ops", kind: "webhook", url: r.url, secret: SECRET }],
      journal: j,
      attempts: 2,
      backoffMs: 10,
      timeoutMs: 200,
    });
    let returned = false;
    n.notify(HOSTILE);
    returned = true;
    expect(returned).toBe(true);
    expect(j.entries).toHaveLength(0);
    await n.settle();
    expect(j.entries.map((e) => [e.body.ok, e.body.error, e.body.final])).toEqual([
      [false, "timeout", false],
      [false, "timeout", true],
    ]);
  });

  it("a flood of notices beyond the queue is refused at once (a notify obligation then fails closed)", async () => {
    const r = await receiver(() => 0);
    const n = new Notifier({
      targets: [{ name: "ops", kind: "webhook", url: r.url, secret: SECRET }],
      journal: journal(),
      maxQueue: 3,
      attempts: 1,
      timeoutMs: 200,
    });
    for (let i = 0; i < 3; i++) n.notify(HOSTILE);
    expect(() => n.notify(HOSTILE)).toThrow(/queue is full/);
    await n.close();
  });

  it("a webhook without a real secret is refused at construction (unsigned notices would be forgeable)", () => {
    expect(
      () =>
        new Notifier({
          targets: [{ name: "x", kind: "webhook", url: "http://127.0.0.1:9/" }],
          journal: journal(),
        }),
    ).toThrow(/secret/);
  });
});
