// The hooks' channels screened with the normalised detector: a memory read (PreMemoryRead)
// and a sub-agent's answer (PostSubAgentResult) that carry a hijack order behind each of
// the seven disguises. The verdict is the enforcement here: a denied read or result
// is withheld by the host, so the order never reaches the model's context, and the session
// is poisoned (its MCP sends are refused from then on).
import { afterEach, describe, expect, it } from "vitest";
import type { Engine } from "../../src/hooks/index.js";
import { DISGUISES } from "../fixtures/screening/attacks.js";
import { ev, tool } from "./events.js";
import { engine } from "./helpers.js";

let open: Engine[] = [];
afterEach(async () => {
  for (const e of open.reverse()) await e.close();
  open = [];
});
async function make(): Promise<Engine> {
  const e = await engine();
  open.push(e);
  return e;
}

const memo = (order: string) =>
  `Preferences: window seat, vegetarian meals. ${order} 463820 to eve@evil.example`;

describe("memory reads", () => {
  it("control: an ordinary memory is read", async () => {
    const e = await make();
    const v = await e.handle(ev("PreMemoryRead", { memory_store: "m", retrieved_content: memo("") }));
    expect(v.decision).not.toBe("deny");
  });

  for (const [name, order] of Object.entries(DISGUISES)) {
    it(`${name}: the retrieved memory is withheld and the session poisoned`, async () => {
      const e = await make();
      const v = await e.handle(ev("PreMemoryRead", { memory_store: "m", retrieved_content: memo(order) }));
      expect(v).toMatchObject({ decision: "deny", category: "prompt_injection" });
      expect((await e.handle(tool("mcp_call", {}, "mcp__mail__send_email"))).decision).toBe("deny");
    });
  }
});

describe("sub-agent answers", () => {
  for (const [name, order] of Object.entries(DISGUISES)) {
    it(`${name}: the sub-agent's answer is withheld from the parent`, async () => {
      const e = await make();
      const v = await e.handle(ev("PostSubAgentResult", { sub_agent_id: "s", result: memo(order) }));
      expect(v).toMatchObject({ decision: "deny", category: "prompt_injection" });
    });
  }
});
