// The journal (operators): entries by filter, the signed head (kept elsewhere, it detects
// truncation later), and a verification of the whole chain. A store that cannot be read
// is a coded 503.
import type { FastifyInstance } from "fastify";
import { Keyring } from "../../crypto/index.js";
import { signHead, verifyJournal } from "../../journal/index.js";
import { ApiError, toApiError } from "../errors.js";
import { AUTH_ERRORS, BODY_ERRORS, mount, type RouteSpec } from "../route.js";
import {
  JournalHeadResponse,
  JournalListResponse,
  JournalQueryString,
  VerifyBody,
  VerifyResponse,
} from "../schemas.js";
import type { RouteContext } from "./context.js";

export const JOURNAL_LIST = {
  method: "GET",
  url: "/v1/journal",
  access: "operator",
  summary: "Journal entries, filtered (operators)",
  query: JournalQueryString,
  response: { name: "JournalListResponse", schema: JournalListResponse },
  description: "Entries",
  errors: [...AUTH_ERRORS, "ERR_SERVER_REQUEST_INVALID", "ERR_SERVER_JOURNAL_UNAVAILABLE"],
} as const satisfies RouteSpec;

export const JOURNAL_HEAD = {
  method: "GET",
  url: "/v1/journal/head",
  access: "operator",
  summary: "The journal head, signed (keep it elsewhere to detect truncation later)",
  response: { name: "JournalHeadResponse", schema: JournalHeadResponse },
  description: "Head",
  errors: [...AUTH_ERRORS, "ERR_SERVER_JOURNAL_UNAVAILABLE"],
} as const satisfies RouteSpec;

export const JOURNAL_VERIFY = {
  method: "POST",
  url: "/v1/journal/verify",
  access: "operator",
  summary: "Verify the whole chain (optionally against a signed head)",
  body: { name: "VerifyBody", schema: VerifyBody, required: false },
  response: { name: "VerifyResponse", schema: VerifyResponse },
  description: "Verification report (ok true or false)",
  errors: [...AUTH_ERRORS, ...BODY_ERRORS, "ERR_SERVER_JOURNAL_UNAVAILABLE"],
} as const satisfies RouteSpec;

export const journalFault = (err: unknown): never => {
  throw new ApiError("ERR_SERVER_JOURNAL_UNAVAILABLE", "the journal cannot be read", {
    details: { cause: toApiError(err).code },
  });
};

export function journalRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const rt = ctx.runtime;

  mount(app, JOURNAL_LIST, async (_req, _reply, { query: q }) => {
    const entries = await rt.store
      .query({
        ...(q.run_id !== undefined ? { run_id: q.run_id } : {}),
        ...(q.type !== undefined ? { type: q.type } : {}),
        ...(q.since !== undefined ? { since: q.since } : {}),
        ...(q.until !== undefined ? { until: q.until } : {}),
        ...(q.decision !== undefined ? { decision: q.decision } : {}),
        descending: q.order === "desc",
        limit: q.limit,
      })
      .catch(journalFault);
    return { entries };
  });

  mount(app, JOURNAL_HEAD, async () => {
    const head = await rt.journal.head().catch(journalFault);
    return {
      head,
      signed: head === null ? null : signHead(head, rt.signer),
      publicKey: rt.signer.publicKey.export({ format: "jwk" }),
    };
  });

  mount(app, JOURNAL_VERIFY, async (_req, _reply, { body }) =>
    verifyJournal(rt.store, new Keyring([rt.signer.publicKey]), {
      ...(body.expectHead !== undefined ? { expectHead: body.expectHead } : {}),
    }).catch(journalFault),
  );
}
