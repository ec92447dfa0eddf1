// The run a governed target calls in: started once however many first calls race, and a
// failed start is not remembered (a later call starts again instead of failing forever).
import { describe, expect, it } from "vitest";
import { RunOnce } from "../../src/adapters/target.js";

describe("RunOnce", () => {
  it("twenty concurrent first calls start one run", async () => {
    let starts = 0;
    const run = new RunOnce(async () => `run-${++starts}`);
    const ids = await Promise.all(Array.from({ length: 20 }, () => run.get()));
    expect(new Set(ids)).toEqual(new Set(["run-1"]));
    expect(starts).toBe(1);
  });

  it("a failed start is forgotten: the next call starts again", async () => {
    let starts = 0;
    const run = new RunOnce(async () => {
      starts++;
      if (starts === 1) throw new Error("sidecar down");
      return "run-2";
    });
    await expect(run.get()).rejects.toThrow("sidecar down");
    expect(await run.get()).toBe("run-2");
    expect(await run.get()).toBe("run-2");
    expect(starts).toBe(2);
  });

  it("a given run id is used as is and nothing is started", async () => {
    const run = new RunOnce(async () => {
      throw new Error("must not start");
    }, "given");
    expect(await run.get()).toBe("given");
  });
});
