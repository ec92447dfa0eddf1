// `npm run build && node dist/examples/two-agents.js`: two agents governed by one Warden
// sidecar on 127.0.0.1, talking only through its communication gate. A planner reads a
// web page (its run is now tainted by web content) and delegates a task to an executor
// with a sealed message (signed with the planner's Ed25519 key, encrypted for the
// executor's X25519 key). The sidecar checks the signature, the policy (who may talk to
// whom, which primitive, which depth), journals the message with its DARE envelope, and
// queues it. The executor takes it, opens it with its own key, and works in the run the
// sidecar started for it and answers with a sealed result, which the planner opens. Its
// run carries the planner's taint, so its later attempt to post data out is denied. Each
// agent holds only its bearer token and its own private keys; the sidecar holds neither.
// The last line is a machine-readable summary (`TWO_AGENTS_SUMMARY {...}`).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { generateKeyPair, saveKeyPair } from "warden-runtime/crypto";
import {
  generateMessagingKeys,
  type IdentityDirectory,
  MemoryNonceStore,
  type MessagingKeys,
  open,
  publicPem,
  type SealedMessage,
  type SealInput,
  seal,
} from "warden-runtime/messaging";
import {
  generateToken,
  hashToken,
  openSidecarRuntime,
  parseSidecarConfig,
  type SidecarServer,
  startSidecar,
} from "warden-runtime/server";

const POLICY = `
rules:
  - id: planner-delegates
    name: the planner may delegate tasks to the executor, one level deep
    priority: 100
    match: { toolClass: message, message: { from: planner, to: executor, primitive: delegate, payloadType: delegate_task, depth: { lte: 1 } } }
    decision: allow
    reason: delegation
  - id: executor-answers
    name: the executor may return results to the planner
    priority: 100
    match: { toolClass: message, message: { from: executor, to: planner, primitive: send, payloadType: return_result } }
    decision: allow
    reason: answer
  - id: no-post-after-web
    name: nothing goes out from a run that saw web content
    priority: 200
    match: { toolClass: http, action: post, taintSources: [web] }
    decision: deny
    reason: tainted egress
  - id: http
    name: http otherwise
    priority: 50
    match: { toolClass: http }
    decision: allow
    reason: http
  - id: files
    name: reading the workspace
    priority: 50
    match: { toolClass: file, action: read }
    decision: allow
    reason: reads
`;

const line = (s: string) => process.stdout.write(`${s}\n`);

interface Agent {
  id: string;
  token: string;
  keys: MessagingKeys;
}

async function call(base: string, agent: Agent, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: {
      authorization: `Bearer ${agent.token}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function startDeployment(dir: string, agents: Agent[]): Promise<SidecarServer> {
  writeFileSync(join(dir, "policy.yaml"), POLICY);
  const key = saveKeyPair(generateKeyPair("ed25519"), dir, { name: "journal" });
  const loaded = parseSidecarConfig(
    {
      host: "127.0.0.1",
      port: 0,
      policies: ["policy.yaml"],
      journal: { path: "journal.db", key: key.privatePem },
      gate: {
        tenant: "example",
        environment: "dev",
        requireContract: false,
        principals: agents.map((a) => ({ id: a.id, roles: ["agent"] })),
      },
      auth: { principals: agents.map((a) => ({ id: a.id, tokenSha256: hashToken(a.token) })) },
      // The sidecar knows each agent's public keys only.
      messaging: { identities: Object.fromEntries(agents.map((a) => [a.id, publicPem(a.keys)])) },
    },
    dir,
  );
  return startSidecar(await openSidecarRuntime(loaded));
}

/** One deployment: its URL, the identity directory and the two agents. */
interface World {
  base: string;
  directory: IdentityDirectory;
  planner: Agent;
  executor: Agent;
}

/** Seals `payload` from one agent to another (the agent's side: its own keys, the recipient's public ones). */
function sealTo(w: World, from: Agent, to: Agent, o: Omit<SealInput, "recipient">): SealedMessage {
  return seal({ ...o, recipient: to.id }, from.keys, w.directory.get(to.id)!, Date.now());
}

function openAs(w: World, me: Agent, message: SealedMessage) {
  return open(message, me.keys, { directory: w.directory, nonces: new MemoryNonceStore(), now: Date.now() });
}

/** 1–2. The planner reads a web page (its run now carries web taint) and delegates a task. */
async function plannerDelegates(w: World) {
  const { base, planner, executor } = w;
  const run = (await call(base, planner, "/v1/runs", {})).body.runId as string;
  const read = await call(base, planner, "/v1/decide", {
    runId: run,
    toolClass: "http",
    action: "get",
    parameters: { url: "https://news.example/q3" },
    taintLabels: [{ source: "web", origin: "https://news.example/q3" }],
  });
  line(`planner  reads a web page                 -> ${read.body.decision}`);
  const task = sealTo(w, planner, executor, {
    primitive: "delegate",
    payloadType: "delegate_task",
    payload: { task: "summarise notes/q3.md for the board" },
    runId: run,
    depth: 1,
  });
  const sent = await call(base, planner, "/v1/messages", task);
  line(`planner  delegates to executor            -> ${sent.status} (journal seq ${sent.body.seq})`);
  return { task, sent };
}

/** 3–4. The executor takes and opens its task, works in the run started for it, and answers. */
async function executorWorks(w: World) {
  const { base, planner, executor } = w;
  const inbox = await call(base, executor, "/v1/messages?recipient=executor");
  const [item] = inbox.body.messages as { message: SealedMessage; runId: string }[];
  if (item === undefined) throw new Error("no message for the executor");
  const opened = openAs(w, executor, item.message);
  line(`executor opens the task                   -> ${JSON.stringify(opened.payload)}`);
  const work = await call(base, executor, "/v1/decide", {
    runId: item.runId,
    toolClass: "file",
    action: "read",
    parameters: { path: "notes/q3.md" },
  });
  line(`executor reads notes/q3.md                -> ${work.body.decision}`);
  const answer = sealTo(w, executor, planner, {
    primitive: "send",
    payloadType: "return_result",
    payload: { summary: "Q3: revenue up, churn down." },
    taskId: opened.header.task_id,
    runId: item.runId,
    depth: 2,
  });
  const replied = await call(base, executor, "/v1/messages", answer);
  const back = await call(base, planner, "/v1/messages?recipient=planner");
  const [reply] = back.body.messages as { message: SealedMessage }[];
  const result = reply === undefined ? undefined : openAs(w, planner, reply.message).payload;
  line(`planner  receives the result              -> ${replied.status} ${JSON.stringify(result)}`);
  return { runId: item.runId, delivered: replied.status === 201 && reply !== undefined };
}

/**
 * 5. The executor tries to post data out: its run carries the planner's web taint, so the
 * Gate denies it (and the behaviour rule quarantines the executor, whose further
 * messages the communication gate refuses).
 */
async function executorExfiltrates(w: World, runId: string) {
  const { base, planner, executor } = w;
  const exfil = await call(base, executor, "/v1/decide", {
    runId,
    toolClass: "http",
    action: "post",
    parameters: { url: "https://collector.example/drop" },
  });
  line(
    `executor posts data out (inherited taint) -> ${exfil.body.decision} ${JSON.stringify(exfil.body.reasonCodes)}`,
  );
  const after = sealTo(w, executor, planner, {
    primitive: "send",
    payloadType: "return_result",
    payload: {},
    runId,
    depth: 2,
  });
  const again = await call(base, executor, "/v1/messages", after);
  const details = (again.body.error as { details?: unknown } | undefined)?.details;
  line(`executor sends again after the denial     -> ${again.status} ${JSON.stringify(details)}`);
  return { denied: exfil.body.decision === "deny", refused: again.status === 403 };
}

export async function main(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), "warden-two-agents-"));
  const planner: Agent = { id: "planner", token: generateToken(), keys: generateMessagingKeys("planner") };
  const executor: Agent = { id: "executor", token: generateToken(), keys: generateMessagingKeys("executor") };
  const server = await startDeployment(dir, [planner, executor]);
  const w: World = {
    base: server.url as string,
    directory: server.runtime.messages.directory,
    planner,
    executor,
  };
  try {
    const { task, sent } = await plannerDelegates(w);
    const work = await executorWorks(w);
    const exfil = await executorExfiltrates(w, work.runId);
    // 6. An agent cannot read another's inbox, nor replay a message.
    const theft = await call(w.base, planner, "/v1/messages?recipient=executor");
    const replay = await call(w.base, planner, "/v1/messages", task);
    const codeOf = (r: { body: Record<string, unknown> }) => (r.body.error as { code: string }).code;
    line(`planner  reads the executor's inbox       -> ${theft.status} ${codeOf(theft)}`);
    line(`planner  replays its delegation           -> ${replay.status} ${codeOf(replay)}`);
    const summary = {
      delegated: sent.status === 201,
      exfiltrationDenied: exfil.denied,
      quarantinedSenderRefused: exfil.refused,
      resultDelivered: work.delivered,
      inboxTheftRefused: theft.status === 403,
      replayRefused: replay.status === 409,
    };
    line(`TWO_AGENTS_SUMMARY ${JSON.stringify(summary)}`);
    return summary;
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = 1;
  });
}
