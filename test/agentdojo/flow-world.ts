// A tiny tool list played through the Harness (the flow-control attack tests): tools from
// names and JSON-Schema properties, a suite folder written to a temp dir, and the steps of a
// scripted run (the user's calls and the hijacked agent's).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { Harness } from "../../bench/agentdojo/harness.js";
import type { Step } from "../../bench/agentdojo/protocol.js";
import { loadSuite } from "../../bench/agentdojo/suite.js";
import type { ScreeningMode } from "../../src/gate/index.js";

export const PRESET = resolve("policies/assistant-tools.yaml");
export const str = { type: "string" };

export const tool = (name: string, properties: Record<string, unknown>, description = "") => ({
  name,
  description,
  parameters: { type: "object", properties, required: Object.keys(properties) },
  category: null,
  observed_state_change: null,
});

/** A suite folder holding `tools`, and one Harness per screening mode; `close` removes both. */
export async function flowWorld(
  tools: readonly ReturnType<typeof tool>[],
  modes: readonly ScreeningMode[],
): Promise<{ harnesses: Harness[]; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "warden-flow-suite-"));
  const put = (f: string, v: unknown) => writeFileSync(join(dir, f), JSON.stringify(v));
  put("suite.json", { suite: "flow" });
  put("tools.json", tools);
  put("outputs.json", { texts: [] });
  put("user_tasks.json", []);
  put("injection_tasks.json", []);
  const harnesses: Harness[] = [];
  for (const screening of modes)
    harnesses.push(await Harness.open(loadSuite(dir), { policy: [PRESET], screening }));
  return {
    harnesses,
    close: async () => {
      for (const h of harnesses) await h.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * `flowWorld` opened before the file's tests and closed after them; returns the harness of
 * the i-th screening mode (call it inside a test).
 */
export function useFlowWorld(
  tools: readonly ReturnType<typeof tool>[],
  modes: readonly ScreeningMode[],
): (i: number) => Harness {
  let harnesses: Harness[] = [];
  let close: () => Promise<void> = async () => {};
  beforeAll(async () => {
    const world = await flowWorld(tools, modes);
    harnesses = world.harnesses;
    close = world.close;
  });
  afterAll(() => close());
  return (i) => {
    const h = harnesses[i];
    if (h === undefined) throw new Error(`no harness for mode ${i}`);
    return h;
  };
}

/** A call of the user's task, returning `output`. */
export const user = (fn: string, args: Record<string, unknown>, output = "ok"): Step => ({
  call: { function: fn, args },
  origin: "user",
  output,
  error: null,
});

/** A call the injected text asked for. */
export const attacker = (fn: string, args: Record<string, unknown>): Step => ({
  ...user(fn, args),
  origin: "injection",
});
