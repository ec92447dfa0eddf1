// Message replay across replicas, as attacks: three `warden sidecar` processes (the
// docker-compose configuration with a `messaging` section) on one real PostgreSQL share
// the message nonces (PgNonceStore), so a sealed message accepted by one replica is a
// replay on every other, and one message delivered to all of them at once passes once.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import {
  generateMessagingKeys,
  IdentityDirectory,
  publicPem,
  type SealedMessage,
  seal,
} from "../../src/messaging/index.js";
import {
  AGENT,
  type Answer,
  type Cluster,
  call,
  codeOf,
  deployCopy,
  type Node,
  startCluster,
  startRun,
  stopCluster,
} from "./cluster-helpers.js";

const sender = generateMessagingKeys("demo-agent");
const recipient = generateMessagingKeys("demo-agent-2");
const directory = new IdentityDirectory();
directory.registerPem("demo-agent-2", publicPem(recipient));

const MESSAGE_RULE = {
  id: "agent-delegates-to-agent-2",
  name: "demo-agent may delegate to demo-agent-2",
  priority: 50,
  match: { toolClass: "message", message: { from: "demo-agent", to: "demo-agent-2", primitive: "delegate" } },
  decision: "allow",
  reason: "delegation",
};

/** deploy/ with the two agents' messaging identities and a rule letting one delegate to the other. */
function messagingDeploy(): string {
  const dir = deployCopy();
  const config = parse(readFileSync(join(dir, "sidecar.yaml"), "utf8")) as Record<string, unknown>;
  config.messaging = {
    identities: { "demo-agent": publicPem(sender), "demo-agent-2": publicPem(recipient) },
  };
  writeFileSync(join(dir, "sidecar.yaml"), stringify(config));
  const policy = parse(readFileSync(join(dir, "policy.yaml"), "utf8")) as { rules: unknown[] };
  policy.rules.push(MESSAGE_RULE);
  writeFileSync(join(dir, "policy.yaml"), stringify(policy));
  return dir;
}

let dir: string;
let db: pg.Pool;
let nodes: Node[] = [];
let cluster: Cluster | undefined;

beforeAll(async () => {
  dir = messagingDeploy();
  cluster = await startCluster(dir);
  ({ db, nodes } = cluster);
}, 120_000);

afterAll(() => stopCluster(cluster));

const node = (i: number) => nodes[i] as Node;

function delegation(runId: string, task: string): SealedMessage {
  return seal(
    {
      recipient: "demo-agent-2",
      primitive: "delegate",
      payloadType: "delegate_task",
      payload: { task },
      runId,
      depth: 1,
    },
    sender,
    directory.get("demo-agent-2")!,
    Date.now(),
  );
}

const send = (n: Node, m: SealedMessage): Promise<Answer> => call(n.url, "/v1/messages", AGENT, m);

async function storedNonces(m: SealedMessage): Promise<number> {
  const r = await db.query("SELECT 1 FROM message_nonces WHERE k = $1", [
    `gate:${m.header.sender}:${m.header.nonce}`,
  ]);
  return r.rowCount ?? 0;
}

describe("message nonces shared by three replicas", () => {
  it("a sealed message accepted on node A and replayed to B and C, which never saw it, is refused as a replay", async () => {
    const m = delegation(await startRun(node(0)), "replay-elsewhere");
    const first = await send(node(0), m);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(await storedNonces(m)).toBe(1);
    for (const other of [node(1), node(2)]) {
      const replay = await send(other, m);
      expect([replay.status, codeOf(replay)]).toEqual([409, "ERR_MESSAGE_REPLAYED"]);
    }
    // And on A itself.
    const again = await send(node(0), m);
    expect([again.status, codeOf(again)]).toEqual([409, "ERR_MESSAGE_REPLAYED"]);
    // Exactly one message.sent entry for it in the shared journal.
    const sent = await db.query(
      "SELECT 1 FROM journal_entries WHERE type = 'warden.message.sent' AND body::jsonb->>'message_id' = $1",
      [m.header.message_id],
    );
    expect(sent.rowCount).toBe(1);
  });

  it("one sealed message delivered to all three replicas at once (four copies each) is accepted exactly once", async () => {
    const m = delegation(await startRun(node(0)), "race");
    const answers = await Promise.all(nodes.flatMap((n) => Array.from({ length: 4 }, () => send(n, m))));
    const accepted = answers.filter((a) => a.status === 201);
    expect(accepted).toHaveLength(1);
    for (const a of answers.filter((x) => x.status !== 201)) {
      // A replay, or (a replica that does not hold the sender's run, before the nonce is
      // claimed) the run unknown there: refused either way, coded.
      expect(["409 ERR_MESSAGE_REPLAYED", "404 ERR_RUN_UNKNOWN"]).toContain(`${a.status} ${codeOf(a)}`);
    }
    // The copies on the replica that holds the run race to the atomic claim: one wins.
    const onA = answers.slice(0, 4);
    expect(onA.filter((a) => a.status === 409 && codeOf(a) === "ERR_MESSAGE_REPLAYED")).toHaveLength(3);
    const sent = await db.query(
      "SELECT 1 FROM journal_entries WHERE type = 'warden.message.sent' AND body::jsonb->>'message_id' = $1",
      [m.header.message_id],
    );
    expect(sent.rowCount).toBe(1);
  });

  it("a message resent after a lost answer with its Idempotency-Key gets the first outcome on any replica (not a replay refusal), and is sent once", async () => {
    const m = delegation(await startRun(node(0)), "resent");
    const keyed = async (n: Node): Promise<Answer> => {
      const res = await fetch(`${n.url}/v1/messages`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${AGENT}`,
          "content-type": "application/json",
          "idempotency-key": "message-key-1",
        },
        body: JSON.stringify(m),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const first = await keyed(node(0));
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    for (const n of nodes) {
      const again = await keyed(n);
      expect(again.status, JSON.stringify(again.body)).toBe(201);
      expect(again.body.messageId).toBe(first.body.messageId);
    }
    const sent = await db.query(
      "SELECT 1 FROM journal_entries WHERE type = 'warden.message.sent' AND body::jsonb->>'message_id' = $1",
      [m.header.message_id],
    );
    expect(sent.rowCount).toBe(1);
    // Without the key the resend is still a replay.
    const bare = await send(node(1), m);
    expect([bare.status, codeOf(bare)]).toEqual([409, "ERR_MESSAGE_REPLAYED"]);
  });

  it("no replica keeps a node-local nonce file: the shared table is the only record", () => {
    expect(existsSync(join(dir, "state/journal.db.messages.db"))).toBe(false);
  });
});
