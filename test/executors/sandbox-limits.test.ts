// The process tier's resource limits (OATS §9.2), each driven past its limit by a real
// program, with a control run that shows the same program succeeds without the limit.
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { planSandbox } from "../../src/executors/index.js";
import { IS_ROOT, runIn, text, workDir } from "./sandbox-helpers.js";

const PY = "/usr/bin/python3";
const hasPython = existsSync(PY);

describe("sandbox tier process: resource limits", () => {
  it("a CPU-bound loop is killed by the CPU limit (ERR_EXEC_RESOURCE_LIMIT)", async () => {
    const r = await runIn(
      workDir(),
      { limits: { cpuSeconds: 1 } },
      { argv: ["sh", "-c", "while :; do :; done"] },
    );
    expect(r).toMatchObject({ ok: false, code: "ERR_EXEC_RESOURCE_LIMIT" });
    expect(r.ok === false && r.evidence?.exit.signal).toBe("SIGXCPU");
  });

  it("a write past the file-size limit is stopped and the file stays within it", async () => {
    const work = workDir();
    const spec = { argv: ["sh", "-c", "head -c 3000000 /dev/zero > big"] };
    const r = await runIn(work, { limits: { fileSizeBytes: 1_000_000 } }, spec);
    expect(r).toMatchObject({ ok: false, code: "ERR_EXEC_RESOURCE_LIMIT" });
    expect(statSync(join(work, "big")).size).toBeLessThanOrEqual(1_000_000);
    const control = await runIn(workDir(), {}, spec);
    expect(control.ok).toBe(true);
  });

  it.runIf(hasPython)("an allocation past the memory limit fails", async () => {
    const spec = { argv: [PY, "-c", "b = bytearray(200 * 1024 * 1024)"] };
    const r = await runIn(workDir(), { limits: { memoryBytes: 100_000_000 } }, spec);
    expect(r).toMatchObject({ ok: false, code: "ERR_EXEC_TOOL_FAILED" });
    expect(text(r.ok ? undefined : r.output?.stderr)).toContain("MemoryError");
    expect((await runIn(workDir(), {}, spec)).ok).toBe(true);
  });

  it.runIf(hasPython)("opening files past the open-files limit fails", async () => {
    const spec = { argv: [PY, "-c", "fs = [open('/dev/null') for _ in range(64)]"] };
    const r = await runIn(workDir(), { limits: { openFiles: 16 } }, spec);
    expect(r).toMatchObject({ ok: false, code: "ERR_EXEC_TOOL_FAILED" });
    expect(text(r.ok ? undefined : r.output?.stderr)).toContain("Too many open files");
    expect((await runIn(workDir(), {}, spec)).ok).toBe(true);
  });

  it("a fork bomb stops at the process limit", async () => {
    const spec = { argv: ["sh", "-c", "for i in $(seq 1 64); do sleep 1 & done; wait"] };
    const r = await runIn(workDir(), { limits: { processes: 16 } }, spec);
    expect(r.ok).toBe(false);
    expect(text(r.ok ? undefined : r.output?.stderr)).toMatch(/fork/i);
  });

  it.runIf(IS_ROOT)("a process limit for a tool running as root is refused, not ignored", async () => {
    const { ProcessExecutor } = await import("../../src/executors/index.js");
    const { mint } = await import("./helpers.js");
    const { binding } = await import("./sandbox-helpers.js");
    const ex = new ProcessExecutor({ workDir: workDir(), sandbox: { limits: { processes: 16 } } });
    const r = await ex.execute(
      mint("tool", {}, { toolClass: "shell", action: "exec" }),
      binding({ argv: ["true"] }),
    );
    expect(r).toMatchObject({ ok: false, code: "ERR_EXEC_SANDBOX_UNAVAILABLE" });
  });

  it("the strictest tier and the lowest limits of every source win", () => {
    const plan = planSandbox(
      {
        tier: "process",
        byRiskTier: { high: "namespace" },
        limits: { cpuSeconds: 10, memoryBytes: 1e9 },
        tools: { scan: { limits: { cpuSeconds: 5 } } },
      },
      {
        tool: "scan",
        riskTier: "high",
        request: { tier: "process", limits: { cpuSeconds: 60, openFiles: 32 } },
      },
    );
    expect(plan.tier).toBe("namespace");
    expect(plan.limits).toEqual({ cpuSeconds: 5, memoryBytes: 1e9, openFiles: 32 });
  });

  it("bad sandbox settings stop the executor's construction (ERR_EXEC_CONFIG_INVALID)", async () => {
    const { ProcessExecutor } = await import("../../src/executors/index.js");
    expect(() => new ProcessExecutor({ workDir: workDir(), sandbox: { limits: { cpuSeconds: 0 } } })).toThrow(
      expect.objectContaining({ code: "ERR_EXEC_CONFIG_INVALID" }),
    );
    expect(() => new ProcessExecutor({ workDir: workDir(), sandbox: { tier: "vm" as never } })).toThrow(
      expect.objectContaining({ code: "ERR_EXEC_CONFIG_INVALID" }),
    );
  });
});
