// Two agents on one real runtime (policy files, SQLite journal, session store, the
// communication gate): a planner that may delegate to an executor, an executor that may
// answer, and mallory, a registered agent nobody may talk to.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateKeyPair, type KeyPair } from "../../src/crypto/index.js";
import {
  generateMessagingKeys,
  type MessagingKeys,
  type PayloadType,
  type Primitive,
  publicPem,
  seal,
} from "../../src/messaging/index.js";
import { composeRuntime, type Runtime } from "../../src/runtime/index.js";

export const POLICY = `
rules:
  - id: planner-delegates
    name: planner may delegate tasks to the executor
    priority: 100
    match: { toolClass: message, message: { from: planner, to: executor, primitive: [delegate, ask, parallel, race], payloadType: delegate_task, depth: { lte: 2 } } }
    decision: allow
    reason: delegation
  - id: executor-answers
    name: executor may return results to the planner
    priority: 100
    match: { toolClass: message, message: { from: executor, to: planner, primitive: send, payloadType: return_result } }
    decision: allow
    reason: answer
  - id: no-exfil-when-tainted
    name: no outbound post from a run that saw web content
    priority: 200
    match: { toolClass: http, action: post, taintSources: [web] }
    decision: deny
    reason: tainted exfiltration
  - id: http
    name: http allowed otherwise
    priority: 50
    match: { toolClass: http }
    decision: allow
    reason: http
`;

export interface Agents {
  rt: Runtime;
  dir: string;
  planner: MessagingKeys;
  executor: MessagingKeys;
  mallory: MessagingKeys;
  now: { t: number };
  signer: KeyPair;
}

export async function twoAgents(
  opts: { policy?: string; maxDepth?: number; inbox?: Record<string, number>; reopen?: Agents } = {},
): Promise<Agents> {
  // `reopen`: the same files, keys and clock (a restart of the same deployment).
  const was = opts.reopen;
  const dir = was?.dir ?? mkdtempSync(join(tmpdir(), "warden-msg-"));
  const policy = join(dir, "policy.yaml");
  if (was === undefined) writeFileSync(policy, opts.policy ?? POLICY);
  const planner = was?.planner ?? generateMessagingKeys("planner");
  const executor = was?.executor ?? generateMessagingKeys("executor");
  const mallory = was?.mallory ?? generateMessagingKeys("mallory");
  const now = was?.now ?? { t: Date.parse("2026-01-01T10:00:00.000Z") };
  const signer = was?.signer ?? generateKeyPair("ed25519");
  const rt = await composeRuntime(
    {
      policy: [policy],
      journal: { path: join(dir, "journal.db"), signer },
      gate: {
        principals: {
          planner: { id: "planner", roles: ["agent"] },
          executor: { id: "executor", roles: ["agent"] },
          mallory: { id: "mallory", roles: ["agent"] },
        },
        runs: "runtime",
        requireContract: false,
      },
      messaging: {
        identities: Object.fromEntries([planner, executor, mallory].map((k) => [k.id, publicPem(k)])),
        ...(opts.maxDepth !== undefined ? { maxDepth: opts.maxDepth } : {}),
        ...(opts.inbox !== undefined ? { inbox: opts.inbox } : {}),
      },
    },
    { clock: () => now.t },
  );
  return { rt, dir, planner, executor, mallory, now, signer };
}

export function sealFor(
  a: Agents,
  from: MessagingKeys,
  to: MessagingKeys,
  o: { runId: string; primitive?: Primitive; payloadType?: PayloadType; depth?: number; payload?: unknown },
) {
  return seal(
    {
      recipient: to.id,
      primitive: o.primitive ?? "delegate",
      payloadType: o.payloadType ?? "delegate_task",
      payload: (o.payload ?? { task: "summarise the quarterly report" }) as never,
      runId: o.runId,
      depth: o.depth ?? 1,
    },
    from,
    a.rt.messages.directory.get(to.id)!,
    a.now.t,
  );
}
