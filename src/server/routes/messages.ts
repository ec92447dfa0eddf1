// Inter-agent messages (agents): POST /v1/messages submits a sealed message to the
// communication gate as the authenticated principal (the sender is the credential's,
// never the body's); GET /v1/messages?recipient= hands the caller its own messages, each
// with the run the sidecar started for it (carrying the sender run's taint and data
// classifications in). A principal reads only its own inbox. The sidecar never holds
// an agent's private keys: agents seal and open themselves (src/messaging seal/open).
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { ERROR_CODES } from "../../contracts/index.js";
import { identityOf } from "../auth-plugin.js";
import { ApiError, type ApiErrorCode, ERROR_STATUS } from "../errors.js";
import { keyedAttempt } from "../idempotency.js";
import { AUTH_ERRORS, BODY_ERRORS, mount, type RouteSpec } from "../route.js";
import type { RouteContext } from "./context.js";

const Id = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_][A-Za-z0-9_.:@/-]*$/);

/** The sealed message as sent (the gate parses it; a downgraded one is ERR_MESSAGE_UNSIGNED). */
const SealedMessageBody = z.record(z.string().max(64), z.json()).meta({
  description: "A sealed warden.msg.v1 message (docs/identity.md#inter-agent-messages)",
});
const MessageSentResponse = z.strictObject({
  ok: z.literal(true),
  messageId: z.string(),
  seq: z.int(),
});
const MessageInboxQuery = z.strictObject({
  recipient: Id,
  limit: z.coerce.number().int().min(1).max(100).optional(),
});
const MessageInboxResponse = z.strictObject({
  messages: z.array(
    z.strictObject({
      message: z.record(z.string(), z.json()),
      runId: z.string(),
      seq: z.int(),
      context: z.record(z.string(), z.json()),
    }),
  ),
});

// Every refusal of the messaging family, a run that is not the sender's, and a shared
// nonce store that cannot answer (distributed mode, 503).
const SUBMIT_ERRORS = [
  ...ERROR_CODES.messaging,
  "ERR_RUN_UNKNOWN",
  "ERR_RUNTIME_STORE_UNAVAILABLE",
] as const satisfies readonly ApiErrorCode[];

export const MESSAGE_SEND = {
  method: "POST",
  url: "/v1/messages",
  access: "agent",
  summary:
    "Send a sealed message to another agent through the communication gate (policy, journal, DARE envelope)",
  body: { name: "SealedMessage", schema: SealedMessageBody, required: true },
  response: { name: "MessageSentResponse", schema: MessageSentResponse },
  status: 201,
  description: "Allowed, journaled and queued for its recipient",
  errors: [
    ...AUTH_ERRORS,
    ...BODY_ERRORS,
    ...SUBMIT_ERRORS,
    "ERR_SERVER_IDEMPOTENCY_PENDING",
    "ERR_SERVER_IDEMPOTENCY_MISMATCH",
  ],
} as const satisfies RouteSpec;

export const MESSAGE_INBOX = {
  method: "GET",
  url: "/v1/messages",
  access: "agent",
  summary: "Take the caller's waiting messages, each with the run started for it (own inbox only)",
  query: MessageInboxQuery,
  response: { name: "MessageInboxResponse", schema: MessageInboxResponse },
  description: "The messages taken (oldest first, at most `limit`)",
  errors: [...AUTH_ERRORS, "ERR_SERVER_REQUEST_INVALID", "ERR_MESSAGE_FORBIDDEN", "ERR_RUN_LIMIT"],
} as const satisfies RouteSpec;

export const MESSAGE_ROUTES: readonly RouteSpec[] = [MESSAGE_SEND, MESSAGE_INBOX];

const isApiCode = (c: string): c is ApiErrorCode => Object.hasOwn(ERROR_STATUS, c);

export function messageRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const gate = ctx.runtime.messages.gate;

  // A resent message with the key of an earlier attempt answers that attempt's outcome (its
  // nonce is spent: without the key a retry after a lost answer is refused as a replay).
  mount(app, MESSAGE_SEND, (req, reply, { body }) =>
    keyedAttempt(ctx.runtime, "POST /v1/messages", req, reply, async () => {
      const who = identityOf(req);
      const r = await gate.submit(body, who.id);
      if (!r.ok) {
        const code = isApiCode(r.code) ? r.code : "ERR_MESSAGE_DENIED";
        throw new ApiError(
          code,
          r.message,
          r.reasonCodes.length > 0 ? { details: { reasonCodes: r.reasonCodes } } : {},
        );
      }
      void reply.code(201);
      return { ok: true, messageId: r.messageId, seq: r.seq };
    }),
  );

  mount(app, MESSAGE_INBOX, async (req, _reply, { query }) => {
    const who = identityOf(req);
    // Answered the same whether or not the other inbox has anything: no oracle.
    if (query.recipient !== who.id)
      throw new ApiError("ERR_MESSAGE_FORBIDDEN", "a principal reads only its own inbox");
    const got = await gate.receive(who.id, query.limit ?? 32);
    return {
      messages: got.map((d) => ({
        message: d.message as unknown as Record<string, z.infer<ReturnType<typeof z.json>>>,
        runId: d.runId,
        seq: d.seq,
        context: d.context as unknown as Record<string, z.infer<ReturnType<typeof z.json>>>,
      })),
    };
  });
}
