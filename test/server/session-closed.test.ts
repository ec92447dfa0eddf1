// Issue 36: calls in flight when a replica drops a run (adopted elsewhere, ended, evicted)
// answered 500 ERR_SERVER_INTERNAL — an unmapped ERR_CONTEXT_SESSION_CLOSED, not logged. It
// has its status now, says nothing executed, and the ambiguous answers say they may have.
import { describe, expect, it } from "vitest";
import { ContextError } from "../../src/contracts/index.js";
import { ERROR_STATUS, toApiError } from "../../src/server/errors.js";

describe("truthful errors", () => {
  it("calls in flight when a replica drops a run answer ERR_CONTEXT_SESSION_CLOSED (409, nothing executed), not 500", () => {
    const e = toApiError(new ContextError("ERR_CONTEXT_SESSION_CLOSED", "run closed"));
    expect(e.code).toBe("ERR_CONTEXT_SESSION_CLOSED");
    expect(e.status).toBe(409);
    expect(e.body().error.details).toEqual({ mayHaveExecuted: false });
    expect(ERROR_STATUS.ERR_CONTEXT_SESSION_CLOSED).toBe(409);
  });
});
