// Who may release a deferred action (the same on one node and across replicas), and the
// DeferQueue's shared copy: an item that cannot be stored is never held, and every hold's
// end is reported once so its row goes.
import { describe, expect, it } from "vitest";
import {
  checkRelease,
  DeferQueue,
  type DeferResolution,
  type DeferredItem,
  type DeferShare,
  localDeferredQueue,
} from "../../src/gate/index.js";

function item(id: string, runId = "run-1", principalId = "alice"): DeferredItem {
  return {
    id,
    runId,
    principalId,
    decisionId: `dec-${id}`,
    summary: { toolClass: "file", action: "delete" },
    createdAt: new Date(0).toISOString(),
    expiresAt: new Date(60_000).toISOString(),
  };
}

const operator = { id: "op", roles: ["approver"] };
const note = "batch window reached";

describe("releasing a deferred action", () => {
  it("an agent holding the approver role cannot release its own action; the hold stays", async () => {
    const defer = new DeferQueue();
    const ctl = new AbortController();
    const held = defer.hold(item("d1"), 60_000, ctl.signal) as Promise<DeferResolution>;
    const q = localDeferredQueue(defer);
    const self = await q.release("d1", {
      outcome: "allow",
      releaser: { id: "alice", roles: ["approver"] },
      note,
    });
    expect(self).toMatchObject({ ok: false, code: "ERR_APPROVAL_FORBIDDEN" });
    expect(defer.list().map((d) => d.id)).toEqual(["d1"]);
    ctl.abort();
    expect((await held).outcome).toBe("cancelled");
  });

  it("refuses a releaser without the approver role and a blank justification; an approver releases", async () => {
    const defer = new DeferQueue();
    const held = defer.hold(item("d2"), 60_000) as Promise<DeferResolution>;
    const q = localDeferredQueue(defer);
    expect(await q.find("d2")).toMatchObject({ decisionId: "dec-d2" });
    const auditor = { id: "aud", roles: ["auditor"] };
    expect(await q.release("d2", { outcome: "allow", releaser: auditor, note })).toMatchObject({
      code: "ERR_APPROVAL_FORBIDDEN",
    });
    expect(await q.release("d2", { outcome: "allow", releaser: operator, note: "   ok     " })).toMatchObject(
      {
        code: "ERR_APPROVAL_INVALID",
      },
    );
    expect(await q.release("d2", { outcome: "allow", releaser: operator, note })).toEqual({ ok: true });
    expect(await held).toEqual({ outcome: "allow", by: "op", note });
    expect(await q.release("d2", { outcome: "deny", releaser: operator, note })).toMatchObject({
      code: "ERR_APPROVAL_NOT_FOUND",
    });
    expect(await q.find("d2")).toBeUndefined();
  });

  it("checkRelease: an item without a principal is still refused to non-approvers", () => {
    const { principalId: _p, ...anonymous } = item("d3");
    expect(checkRelease(anonymous, { id: "x", roles: [] }, note)).toMatchObject({
      code: "ERR_APPROVAL_FORBIDDEN",
    });
    expect(checkRelease(anonymous, operator, note)).toEqual({ ok: true });
  });
});

describe("the DeferQueue's shared copy", () => {
  /** A share that records what it is told (and fails the stores `fail` names). */
  function recording(fail: (id: string) => boolean) {
    const log = { stored: [] as string[], ended: [] as string[] };
    const share: DeferShare = {
      stored: async (i) => {
        log.stored.push(i.id);
        if (fail(i.id)) throw new Error("database unreachable");
      },
      ended: (id) => {
        log.ended.push(id);
      },
    };
    return { share, log };
  }

  it("an item whose row cannot be stored is cancelled (the Gate denies it) and no longer holds back its run", async () => {
    const defer = new DeferQueue();
    const { share, log } = recording((id) => id === "bad");
    defer.share(share);
    const bad = defer.hold(item("bad"), 60_000) as Promise<DeferResolution>;
    const next = defer.hold(item("next"), 60_000) as Promise<DeferResolution>;
    expect(await bad).toEqual({ outcome: "cancelled" });
    expect(defer.resolve("next", { outcome: "allow", by: "op" })).toBe(true);
    expect((await next).outcome).toBe("allow");
    expect(log.stored).toEqual(["bad", "next"]);
    expect(log.ended).toEqual(["bad", "next"]);
  });

  it("reports the end of every hold once: released, timed out, cancelled", async () => {
    const defer = new DeferQueue();
    const { share, log } = recording(() => false);
    defer.share(share);
    const ctl = new AbortController();
    const a = defer.hold(item("a", "r1"), 60_000) as Promise<DeferResolution>;
    const b = defer.hold(item("b", "r2"), 10) as Promise<DeferResolution>;
    const c = defer.hold(item("c", "r3"), 60_000, ctl.signal) as Promise<DeferResolution>;
    defer.resolve("a", { outcome: "deny", by: "op" });
    ctl.abort();
    await Promise.all([a, b, c]);
    expect([...log.ended].sort()).toEqual(["a", "b", "c"]);
    expect(() => defer.share(share)).toThrow();
  });
});
