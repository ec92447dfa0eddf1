// Execution tickets: the only thing an executor accepts. A ticket is minted by the
// Gate after the decision record is durable, is bound to that decision id and to a
// frozen copy of the exact validated (or rewritten) parameters, and can be redeemed
// once. Tickets are tracked in a module-private WeakMap, so an object that merely
// looks like a ticket (a structural copy, Object.create of the prototype, a JSON
// round trip) is not one.
import { randomBytes } from "node:crypto";
import { type Sha256Hash, sha256Of } from "../contracts/index.js";

export type TicketFailureCode =
  | "ERR_TICKET_FORGED"
  | "ERR_TICKET_REUSED"
  | "ERR_TICKET_EXPIRED"
  | "ERR_TICKET_ALTERED"
  | "ERR_TICKET_WRONG_TOOL";

/** An obligation of the decision, carried by its ticket for the executor to fulfil (or refuse). */
export interface TicketObligation {
  type: string;
  params?: Record<string, unknown>;
}

/** The signed human approval a step_up ticket was released by. */
export interface TicketApproval {
  approvalId: string;
  approver: string;
  signingKeyId: string;
  signature: string;
  /** Signed by the approver's own key (verified by the approvals service), not only the runtime's. */
  approverSigned: boolean;
}

export interface TicketGrant {
  decisionId: string;
  runId: string;
  principalId: string;
  toolClass: string;
  action: string;
  tool?: string;
  parameters: Record<string, unknown>;
  /** Lifetime in ms (default 60 s). */
  ttlMs?: number;
  now?: number;
  obligations?: readonly TicketObligation[];
  approval?: TicketApproval;
}

interface TicketState {
  redeemed: boolean;
  expiresAt: number;
  parametersHash: Sha256Hash;
  nonce: string;
}

const registry = new WeakMap<object, TicketState>();

function deepFreeze<T>(v: T): T {
  if (v && typeof v === "object") {
    for (const child of Object.values(v)) deepFreeze(child);
    Object.freeze(v);
  }
  return v;
}

export class ExecutionTicket {
  readonly decisionId: string;
  readonly runId: string;
  readonly principalId: string;
  readonly toolClass: string;
  readonly action: string;
  readonly tool: string | undefined;
  /** The parameters the executor must use: a frozen deep copy of what the Gate authorised. */
  readonly parameters: Readonly<Record<string, unknown>>;
  /** The decision's obligations (frozen): the executor refuses to complete an action that does not meet them. */
  readonly obligations: readonly Readonly<TicketObligation>[];
  /** The signed HITL approval that released a step_up, when there was one. */
  readonly approval: Readonly<TicketApproval> | undefined;

  private constructor(grant: TicketGrant) {
    this.decisionId = grant.decisionId;
    this.runId = grant.runId;
    this.principalId = grant.principalId;
    this.toolClass = grant.toolClass;
    this.action = grant.action;
    this.tool = grant.tool;
    this.parameters = deepFreeze(structuredClone(grant.parameters));
    this.obligations = deepFreeze(structuredClone([...(grant.obligations ?? [])]));
    this.approval = grant.approval === undefined ? undefined : deepFreeze({ ...grant.approval });
    Object.freeze(this);
  }

  /** @internal Only the Gate mints tickets; the Gate's public API does not re-export this. */
  static mint(grant: TicketGrant): ExecutionTicket {
    const t = new ExecutionTicket(grant);
    registry.set(t, {
      redeemed: false,
      expiresAt: (grant.now ?? Date.now()) + (grant.ttlMs ?? 60_000),
      parametersHash: sha256Of(t.parameters),
      nonce: randomBytes(16).toString("hex"),
    });
    return t;
  }

  toJSON(): Record<string, unknown> {
    // Serialising a ticket yields a description, never something redeemable.
    return { decisionId: this.decisionId, runId: this.runId, tool: this.tool ?? null, redeemable: false };
  }
}

// An instance must not lead back to its class: `ticket.constructor.mint(...)` would let any
// holder of one ticket (an embedded host, a tool's callback) mint tickets for any tool and
// parameters. `instanceof` needs only the prototype chain, not this back-reference.
Reflect.deleteProperty(ExecutionTicket.prototype, "constructor");
Object.freeze(ExecutionTicket.prototype);

export type RedeemResult =
  | { ok: true; ticket: ExecutionTicket; parameters: Readonly<Record<string, unknown>> }
  | { ok: false; code: TicketFailureCode; message: string };

export interface RedeemExpectation {
  /** The executor's tool/contract name; must match what the Gate authorised. */
  tool?: string;
  toolClass?: string;
  now?: number;
}

/** Consumes a ticket. Succeeds once per ticket; every other path is a coded failure. */
export function redeemTicket(ticket: unknown, expect: RedeemExpectation = {}): RedeemResult {
  const state = typeof ticket === "object" && ticket !== null ? registry.get(ticket) : undefined;
  if (!state || !(ticket instanceof ExecutionTicket)) {
    return { ok: false, code: "ERR_TICKET_FORGED", message: "not a Gate-issued execution ticket" };
  }
  if (state.redeemed)
    return { ok: false, code: "ERR_TICKET_REUSED", message: "execution ticket already used" };
  if ((expect.now ?? Date.now()) > state.expiresAt) {
    state.redeemed = true;
    return { ok: false, code: "ERR_TICKET_EXPIRED", message: "execution ticket expired" };
  }
  if (sha256Of(ticket.parameters) !== state.parametersHash) {
    state.redeemed = true;
    return { ok: false, code: "ERR_TICKET_ALTERED", message: "execution ticket parameters were altered" };
  }
  if (
    (expect.tool !== undefined && expect.tool !== ticket.tool) ||
    (expect.toolClass !== undefined && expect.toolClass !== ticket.toolClass)
  ) {
    return {
      ok: false,
      code: "ERR_TICKET_WRONG_TOOL",
      message: "execution ticket was issued for another tool",
    };
  }
  state.redeemed = true;
  return { ok: true, ticket, parameters: ticket.parameters };
}
