// The communication gate (OATS §10.1): every message between agents passes here. It is
// judged on its clear header without decrypting: the sender's signature and key (from
// the directory), the time window, that the authenticated principal is the sender, that
// the sender's run is its own and not quarantined, the delegation depth, policy (rules
// match `message: {from, to, primitive, payloadType, depth}`; nothing matched is deny),
// and the nonce. The nonce store may be shared by replicas and answer asynchronously: a
// message whose nonce is already recorded is refused as a replay right after its signature
// and sender are checked (before the run lookup, so a replica that does not hold the
// sender's run still answers ERR_MESSAGE_REPLAYED), and the nonce is claimed atomically
// after policy, so of concurrent deliveries of one message exactly one passes. An allowed message is journaled (`warden.message.sent`, with its DARE
// AgentMessageEnvelope and the cross-agent context) before it reaches the bounded inbox.
// Refusals are coded and journaled (`warden.message.refused`).
import type { Session, SessionStore } from "../context/index.js";
import {
  type AgentMessageEnvelope,
  MessagingError,
  WardenError,
  type WardenErrorCode,
} from "../contracts/index.js";
import type { GatePolicy, PrincipalConfig } from "../gate/index.js";
import type { PolicyInput, PolicyOutcome } from "../policy/index.js";
import { contextOf, recipientDepth } from "./cross-agent.js";
import { buildEnvelope } from "./envelope.js";
import {
  type CrossAgentContext,
  MESSAGE_REFUSED_EVENT,
  MESSAGE_SENT_EVENT,
  type MessageRefusedBody,
} from "./events.js";
import type { IdentityDirectory } from "./identity.js";
import { type Delivered, Inbox, type InboxOptions } from "./inbox.js";
import type { NonceStore } from "./nonce-store.js";
import { claimNonceAsync, DEFAULT_SKEW_MS, nonceKey, verifySealed } from "./seal.js";
import { MessageHeaderSchema, type SealedMessage } from "./wire.js";

export interface CommunicationGateOptions {
  directory: IdentityDirectory;
  policy: GatePolicy;
  principal(id: string): PrincipalConfig | undefined;
  sessions: SessionStore;
  journal: {
    append(input: {
      type: string;
      run_id?: string | null;
      body: Record<string, unknown>;
    }): Promise<{ seq: number }>;
  };
  nonces: NonceStore;
  clock: () => number;
  tenantId?: string;
  skewMs?: number;
  /** The deepest delegation allowed (default 4): a message's depth is its sender run's depth + 1. */
  maxDepth?: number;
  inbox?: InboxOptions;
}

export type SubmitRefusal = {
  ok: false;
  code: WardenErrorCode;
  message: string;
  reasonCodes: string[];
};

export type SubmitOutcome =
  | { ok: true; messageId: string; seq: number; envelope: AgentMessageEnvelope; context: CrossAgentContext }
  | SubmitRefusal;

/** The scope of the gate's nonces (opening on the agent's side has its own, per recipient). */
const GATE_SCOPE = "gate";

const refusal = (code: WardenErrorCode, message: string, reasonCodes: string[] = []): SubmitRefusal => ({
  ok: false,
  code,
  message,
  reasonCodes,
});

/** A nonce store that cannot answer refuses the message (fail closed), with the store's code (503). */
function storeRefusal(err: unknown): SubmitRefusal {
  const code = err instanceof WardenError ? err.code : "ERR_MESSAGE_DENIED";
  return refusal(code, "the message nonce store is unavailable", ["nonce_store_unavailable"]);
}

export class CommunicationGate {
  readonly #o: CommunicationGateOptions;
  readonly #inbox: Inbox;
  readonly #maxDepth: number;

  constructor(o: CommunicationGateOptions) {
    this.#o = o;
    this.#maxDepth = o.maxDepth ?? 4;
    this.#inbox = new Inbox(o.sessions, o.inbox);
  }

  /** Loads the waiting messages a persistent inbox store holds (call once, before serving). */
  restore(): Promise<void> {
    return this.#inbox.restore();
  }

  /** Judges a sealed message submitted by the authenticated `principalId`. */
  async submit(value: unknown, principalId: string): Promise<SubmitOutcome> {
    const judged = await this.#judge(value, principalId);
    if (!judged.ok) {
      await this.#journalRefusal(value, principalId, judged);
      return refusal(judged.code, judged.message, judged.reasonCodes);
    }
    const { m, context, outcome } = judged;
    const h = m.header;
    const slot = this.#inbox.reserve(h.recipient, h.sender);
    if (slot !== "ok") {
      const r = refusal(
        "ERR_MESSAGE_INBOX_FULL",
        slot === "full"
          ? "the recipient's inbox is full"
          : "this sender holds its share of waiting messages (inbox.maxPerSender, maxPerSenderPerRecipient)",
      );
      await this.#journalRefusal(value, principalId, r);
      return r;
    }
    try {
      const envelope = buildEnvelope(m, { tenantId: this.#o.tenantId ?? "default" });
      const e = await this.#o.journal.append({
        type: MESSAGE_SENT_EVENT,
        run_id: h.run_id ?? null,
        body: {
          message_id: h.message_id,
          from: h.sender,
          to: h.recipient,
          primitive: h.primitive,
          payload_type: h.payload_type,
          depth: h.depth,
          ...(h.run_id !== undefined ? { run_id: h.run_id } : {}),
          task_id: h.task_id,
          expires_at: h.expires_at,
          reason_codes: outcome.reasonCodes.slice(0, 64),
          matched_rules: outcome.matchedRules.map((r) => r.id).slice(0, 64),
          policy_bundle_hash: outcome.policyBundleHash,
          context,
          dare: envelope,
        },
      });
      await this.#inbox.deliver({ message: m, context, seq: e.seq });
      return { ok: true, messageId: h.message_id, seq: e.seq, envelope, context };
    } catch {
      this.#inbox.release(h.recipient, h.sender);
      return refusal("ERR_MESSAGE_DENIED", "the message could not be journaled", ["journal_unavailable"]);
    }
  }

  /**
   * Hands the principal up to `limit` of its messages, oldest first. Each starts a run of
   * the recipient that carries the sender run's taint and classifications in.
   */
  receive(principalId: string, limit = 32): Promise<Delivered[]> {
    return this.#inbox.take(principalId, limit);
  }

  /** Messages waiting for a principal. */
  pending(principalId: string): number {
    return this.#inbox.size(principalId);
  }

  /** Everything before policy: authenticity, who is sending from which run, and depth. */
  async #admit(value: unknown, principalId: string, opts: { now: number; skewMs: number }) {
    const o = this.#o;
    let m: SealedMessage;
    try {
      m = verifySealed(value, o.directory, opts);
    } catch (err) {
      if (err instanceof MessagingError) return refusal(err.code, err.message);
      throw err;
    }
    const h = m.header;
    if (h.sender !== principalId)
      return refusal("ERR_MESSAGE_FORBIDDEN", "a principal sends only as itself", ["sender_not_principal"]);
    try {
      if (await o.nonces.seen(nonceKey(GATE_SCOPE, h), opts.now))
        return refusal("ERR_MESSAGE_REPLAYED", "this message was seen before");
    } catch (err) {
      return storeRefusal(err);
    }
    const sender = o.principal(h.sender);
    if (sender === undefined) return refusal("ERR_MESSAGE_SENDER_UNKNOWN", "the sender is not a principal");
    if (o.principal(h.recipient) === undefined || !o.directory.has(h.recipient))
      return refusal("ERR_MESSAGE_WRONG_RECIPIENT", "the recipient is not a registered principal");
    if (h.run_id === undefined)
      return refusal("ERR_MESSAGE_DENIED", "a message is sent from a run", ["message_requires_run"]);
    let session: Session;
    try {
      session = o.sessions.run(h.run_id, principalId);
    } catch {
      return refusal("ERR_RUN_UNKNOWN", "no such run for this principal");
    }
    if (session.quarantined)
      return refusal("ERR_MESSAGE_DENIED", "the sender is quarantined", ["quarantined"]);
    const depth = recipientDepth(this.#inbox, h.run_id);
    if (h.depth !== depth)
      return refusal("ERR_MESSAGE_DENIED", `the message's depth must be ${depth}`, ["depth_mismatch"]);
    if (depth > this.#maxDepth)
      return refusal("ERR_MESSAGE_DENIED", `delegation deeper than ${this.#maxDepth}`, ["depth_exceeded"]);
    return { ok: true as const, m, sender, session, depth, runId: h.run_id };
  }

  async #judge(value: unknown, principalId: string) {
    const o = this.#o;
    const opts = { now: o.clock(), skewMs: o.skewMs ?? DEFAULT_SKEW_MS };
    const a = await this.#admit(value, principalId, opts);
    if (!a.ok) return a;
    const { m, sender, session, depth } = a;
    const h = m.header;
    const facts = session.snapshot(opts.now);
    const input: PolicyInput = {
      request: {
        principalId,
        runId: a.runId,
        toolClass: "message",
        action: h.primitive,
        parameters: {},
        taintLabels: [],
      },
      principal: {
        id: sender.id,
        roles: [...sender.roles],
        ...(sender.capabilities ? { capabilities: sender.capabilities } : {}),
      },
      taint: session.taintSeen(),
      session: facts,
      message: {
        from: h.sender,
        to: h.recipient,
        primitive: h.primitive,
        payloadType: h.payload_type,
        depth,
      },
    };
    let outcome: PolicyOutcome;
    try {
      outcome = o.policy.evaluate(input);
    } catch {
      return refusal("ERR_MESSAGE_DENIED", "the policy could not be evaluated", ["policy_error"]);
    }
    if (outcome.decision !== "allow") {
      const why =
        outcome.decision === "deny" ? outcome.reasonCodes : [`message_${outcome.decision}_unsupported`];
      return {
        ...refusal("ERR_MESSAGE_DENIED", "the communication policy refused the message", why),
        outcome,
      };
    }
    try {
      await claimNonceAsync(o.nonces, GATE_SCOPE, h, opts);
    } catch (err) {
      if (err instanceof MessagingError) return refusal(err.code, err.message);
      return storeRefusal(err);
    }
    return { ok: true as const, m, outcome, context: contextOf(session, facts, depth) };
  }

  async #journalRefusal(
    value: unknown,
    principalId: string,
    r: SubmitRefusal & { outcome?: PolicyOutcome },
  ): Promise<void> {
    const claimed = MessageHeaderSchema.safeParse((value as { header?: unknown } | null)?.header);
    const h = claimed.success ? claimed.data : undefined;
    const body: MessageRefusedBody = {
      code: r.code,
      submitted_by: principalId,
      ...(h !== undefined
        ? {
            message_id: h.message_id,
            from: h.sender,
            to: h.recipient,
            primitive: h.primitive,
            payload_type: h.payload_type,
            depth: h.depth,
          }
        : {}),
      ...(r.reasonCodes.length > 0 ? { reason_codes: r.reasonCodes.slice(0, 64) } : {}),
      ...(r.outcome !== undefined
        ? { matched_rules: r.outcome.matchedRules.map((x) => x.id).slice(0, 64) }
        : {}),
    };
    try {
      await this.#o.journal.append({ type: MESSAGE_REFUSED_EVENT, body });
    } catch {
      // The refusal stands without its entry: nothing was delivered.
    }
  }
}
