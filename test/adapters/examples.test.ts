// The three adapter examples (examples/adapters/*.ts) run end to end: the invoice is paid
// after an approval, the page is read, the injected exfiltration is refused and the model's
// next turn reads the refusal. `node dist/examples/adapters/<name>.js` runs the same main().
import { describe, expect, it } from "vitest";
import { main as aiSdk } from "../../examples/adapters/ai-sdk.js";
import { main as langchain } from "../../examples/adapters/langchain.js";
import { main as openaiAgents } from "../../examples/adapters/openai-agents.js";

describe("adapter examples", () => {
  for (const [name, main] of [
    ["langchain", langchain],
    ["ai-sdk", aiSdk],
    ["openai-agents", openaiAgents],
  ] as const) {
    it(`${name}: the injected exfiltration is refused and the model reads why`, async () => {
      expect(await main()).toEqual({
        framework: name,
        paid: true,
        pageRead: true,
        exfiltrationDenied: true,
        sentToAttacker: 0,
        modelSawDenial: true,
      });
    });
  }
});
