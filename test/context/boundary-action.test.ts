// Taint boundaries keyed `class:action` (src/context/result.ts): what a fetch returns is the
// web even when every tool of the deployment shares one tool class.
import { describe, expect, it } from "vitest";
import { boundaryLabels } from "../../src/context/result.js";
import { GateRequest } from "../../src/contracts/index.js";

const req = (action: string) =>
  GateRequest.parse({ principalId: "a", runId: "r", toolClass: "assistant", action, parameters: {} });

describe("taint boundaries by class and action", () => {
  const boundaries = { "assistant:fetch": "web" as const, assistant: "mcp" as const };

  it("a class:action key wins over the class alone", () => {
    expect(boundaryLabels(req("fetch"), 1, boundaries).map((l) => l.source)).toEqual(["tool-output", "web"]);
    expect(boundaryLabels(req("read"), 2, boundaries).map((l) => l.source)).toEqual(["tool-output", "mcp"]);
  });

  it("without a matching key only tool-output is attached", () => {
    expect(boundaryLabels(req("read"), 3, {}).map((l) => l.source)).toEqual(["tool-output"]);
  });
});
