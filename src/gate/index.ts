// Public face of the Gate: the reference monitor that turns a structured proposal
// into one of five decisions, commits the decision record, and mints the execution
// tickets executors require. Tickets are exported as a type only: nothing outside
// the Gate can mint one.
export {
  type ApprovalRequest,
  type Approvals,
  type ApprovalVerdict,
  type Approver,
  type DecideResult,
  InProcessApprovals,
} from "./approvals.js";
export { DeferQueue, type DeferResolution, type DeferredItem } from "./defer.js";
export {
  type ExecutionTicket,
  type RedeemExpectation,
  type RedeemResult,
  redeemTicket,
  type TicketFailureCode,
} from "./ticket.js";
