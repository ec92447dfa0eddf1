// The memory firewall over HTTP (docs/memory.md). Agents write, read, search and delete
// their governed memory in a run the runtime started for them; every operation is a Gate
// decision under the credential's principal (never a principal named in the body).
// Operators quarantine a poisoned memory and list the runs that read it.
//   POST /v1/memory/write | read | search | delete      (agents)
//   POST /v1/memory/:id/quarantine, GET /v1/memory/:id/readers   (operators)
// Without a `memory:` section in the configuration every route answers 422
// ERR_SERVER_NO_EXECUTOR. The firewall's refusals keep their ERR_MEMORY_* codes.
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { isoTime, TaintLabel } from "../../contracts/index.js";
import type { MemoryFirewall, MemoryResult } from "../../memory/index.js";
import { identityOf } from "../auth-plugin.js";
import { ApiError, type ApiErrorCode } from "../errors.js";
import { AUTH_ERRORS, BODY_ERRORS, mount, type RouteSpec } from "../route.js";
import { IdString } from "../schemas.js";
import type { RouteContext } from "./context.js";

const RunRef = { runId: z.string().min(1).max(128) };
const MemoryId = z.string().regex(/^mem_[0-9a-f]{32}$/);

export const MemoryWriteBody = z.strictObject({
  ...RunRef,
  content: z.string().min(1).max(16_384),
  classification: z.string().min(1).max(64),
  scope: z.enum(["private", "shared"]).optional(),
});
export const MemoryIdBody = z.strictObject({ ...RunRef, id: MemoryId });
export const MemorySearchBody = z.strictObject({
  ...RunRef,
  query: z.string().min(1).max(1024),
  limit: z.number().int().min(1).max(100).optional(),
});

const Item = z.object({
  id: z.string(),
  content: z.string(),
  classification: z.string(),
  scope: z.enum(["private", "shared"]),
  taint: z.array(TaintLabel),
  createdAt: z.string(),
  score: z.number().optional(),
});
const Answer = <T extends z.ZodType>(value: T) =>
  z.object({ value, taint: z.array(TaintLabel), decisionId: z.string() });
export const MemoryWriteResponse = Answer(z.object({ id: z.string() }));
export const MemoryReadResponse = Answer(Item);
export const MemorySearchResponse = Answer(z.array(Item));
export const MemoryQuarantineBody = z.strictObject({ reason: z.string().min(1).max(1024) });
export const MemoryReadersResponse = z.object({
  quarantined: z.boolean().optional(),
  readers: z.array(z.object({ runId: z.string(), principalId: z.string(), at: z.string() })),
});

const AGENT_ERRORS = [
  ...AUTH_ERRORS,
  ...BODY_ERRORS,
  "ERR_RUN_UNKNOWN",
  "ERR_RUN_ELSEWHERE",
  "ERR_RUNTIME_STORE_UNAVAILABLE",
  "ERR_SERVER_NO_EXECUTOR",
  "ERR_MEMORY_DENIED",
  "ERR_MEMORY_STORE",
] as const satisfies readonly ApiErrorCode[];

const agentRoute = <B extends z.ZodType, R extends z.ZodType>(
  op: string,
  body: { name: string; schema: B },
  response: { name: string; schema: R },
  errors: readonly ApiErrorCode[],
) =>
  ({
    method: "POST",
    url: `/v1/memory/${op}`,
    access: "agent",
    summary: `Memory ${op} through the Gate (the memory firewall)`,
    body: { ...body, required: true },
    response,
    description: `The ${op}'s result with its taint and the authorising decision`,
    errors: [...AGENT_ERRORS, ...errors],
  }) as const;

export const MEMORY_WRITE = agentRoute(
  "write",
  { name: "MemoryWriteBody", schema: MemoryWriteBody },
  { name: "MemoryWriteResponse", schema: MemoryWriteResponse },
  ["ERR_MEMORY_INSTRUCTION", "ERR_MEMORY_CLASSIFIED", "ERR_MEMORY_LIMIT"],
) satisfies RouteSpec;
export const MEMORY_READ = agentRoute(
  "read",
  { name: "MemoryIdBody", schema: MemoryIdBody },
  { name: "MemoryReadResponse", schema: MemoryReadResponse },
  ["ERR_MEMORY_NOT_FOUND", "ERR_MEMORY_CLASSIFIED", "ERR_MEMORY_QUARANTINED"],
) satisfies RouteSpec;
export const MEMORY_SEARCH = agentRoute(
  "search",
  { name: "MemorySearchBody", schema: MemorySearchBody },
  { name: "MemorySearchResponse", schema: MemorySearchResponse },
  [],
) satisfies RouteSpec;
export const MEMORY_DELETE = agentRoute(
  "delete",
  { name: "MemoryIdBody", schema: MemoryIdBody },
  { name: "MemoryWriteResponse", schema: MemoryWriteResponse },
  ["ERR_MEMORY_NOT_FOUND"],
) satisfies RouteSpec;

const IdParam = z.strictObject({ id: IdString });
export const MEMORY_QUARANTINE = {
  method: "POST",
  url: "/v1/memory/:id/quarantine",
  access: "operator",
  summary: "Quarantine a poisoned memory; answers every run that read it (journaled)",
  params: IdParam,
  body: { name: "MemoryQuarantineBody", schema: MemoryQuarantineBody, required: true },
  response: { name: "MemoryReadersResponse", schema: MemoryReadersResponse },
  description: "Whether it was quarantined now, and the runs that read it, oldest first",
  errors: [...AUTH_ERRORS, ...BODY_ERRORS, "ERR_SERVER_NO_EXECUTOR", "ERR_MEMORY_NOT_FOUND"],
} as const satisfies RouteSpec;
export const MEMORY_READERS = {
  method: "GET",
  url: "/v1/memory/:id/readers",
  access: "operator",
  summary: "The runs that read a memory",
  params: IdParam,
  response: { name: "MemoryReadersResponse", schema: MemoryReadersResponse },
  description: "The runs that read it, oldest first",
  errors: [...AUTH_ERRORS, "ERR_SERVER_NO_EXECUTOR"],
} as const satisfies RouteSpec;

export const MEMORY_ROUTES: readonly RouteSpec[] = [
  MEMORY_WRITE,
  MEMORY_READ,
  MEMORY_SEARCH,
  MEMORY_DELETE,
  MEMORY_QUARANTINE,
  MEMORY_READERS,
];

function firewall(ctx: RouteContext): MemoryFirewall {
  const m = ctx.runtime.memory;
  if (m === undefined) throw new ApiError("ERR_SERVER_NO_EXECUTOR", "the memory firewall is not configured");
  return m;
}

function answer<T>(r: MemoryResult<T>) {
  if (!r.ok) {
    throw new ApiError(
      r.code,
      r.message,
      r.reasonCodes !== undefined ? { details: { reasonCodes: r.reasonCodes } } : {},
    );
  }
  return { value: r.value, taint: r.taint, decisionId: r.decisionId };
}

export function memoryRoutes(app: FastifyInstance, ctx: RouteContext): void {
  // The caller is the credential's principal, in a run the runtime started for it.
  const caller = async (req: Parameters<typeof identityOf>[0], runId: string) => {
    const who = identityOf(req);
    // Distributed mode: the run's owner serves it (421 names it), adopted here when it is gone.
    await ctx.runtime.ensureRun(runId, who.id);
    ctx.runtime.sessions.run(runId, who.id);
    return { principalId: who.id, runId };
  };
  mount(app, MEMORY_WRITE, async (req, reply, { body }) => {
    const fw = firewall(ctx);
    const input = { content: body.content, classification: body.classification };
    const scoped = body.scope !== undefined ? { ...input, scope: body.scope } : input;
    const r = answer(await fw.write(await caller(req, body.runId), scoped));
    return reply.code(201).send(r);
  });
  mount(app, MEMORY_READ, async (req, _reply, { body }) =>
    answer(await firewall(ctx).read(await caller(req, body.runId), body.id)),
  );
  mount(app, MEMORY_SEARCH, async (req, _reply, { body }) =>
    answer(await firewall(ctx).search(await caller(req, body.runId), body.query, body.limit ?? 10)),
  );
  mount(app, MEMORY_DELETE, async (req, _reply, { body }) =>
    answer(await firewall(ctx).delete(await caller(req, body.runId), body.id)),
  );
  const readers = (list: { runId: string; principalId: string; at: number }[]) =>
    list.map((r) => ({ runId: r.runId, principalId: r.principalId, at: isoTime(r.at) }));
  mount(app, MEMORY_QUARANTINE, async (req, _reply, { params, body }) => {
    const q = await firewall(ctx).quarantine(params.id, body.reason, `operator:${identityOf(req).id}`);
    if (!q.found) throw new ApiError("ERR_MEMORY_NOT_FOUND", "no such memory");
    return { quarantined: q.quarantined, readers: readers(q.readers) };
  });
  mount(app, MEMORY_READERS, async (_req, _reply, { params }) => ({
    readers: readers(firewall(ctx).readersOf(params.id)),
  }));
}
