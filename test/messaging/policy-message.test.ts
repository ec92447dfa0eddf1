// The `message:` match of a YAML rule: it matches only inter-agent messages (never a tool
// call, even one in the `message` tool class), each field narrows, and the schema is strict.
import { describe, expect, it } from "vitest";
import type { PolicyInput, PolicyMessage } from "../../src/policy/index.js";
import { loadPolicyBundle } from "../../src/policy/index.js";

const RULES = `
rules:
  - id: talk
    name: planner may delegate to executor up to depth 2
    priority: 100
    match: { message: { from: planner, to: [executor], primitive: [delegate, ask], payloadType: delegate_task, depth: { lte: 2 } } }
    decision: allow
    reason: ok
`;

const bundle = loadPolicyBundle({ yaml: [{ name: "m.yaml", text: RULES }] });

function input(message?: Partial<PolicyMessage>): PolicyInput {
  return {
    request: {
      principalId: "planner",
      runId: "r",
      toolClass: "message",
      action: "delegate",
      parameters: {},
      taintLabels: [],
    },
    principal: { id: "planner", roles: [] },
    taint: [],
    session: {
      runId: "r",
      counters: { proposed: 0, allowed: 0, denied: 0, deferred: 0, executed: 0, stepUps: 0, modified: 0 },
      perToolCalls: {},
      dataClassificationsSeen: [],
      quarantined: false,
    },
    ...(message !== undefined
      ? {
          message: {
            from: "planner",
            to: "executor",
            primitive: "delegate",
            payloadType: "delegate_task",
            depth: 1,
            ...message,
          } as PolicyMessage,
        }
      : {}),
  };
}

describe("policy message: match", () => {
  it("allows the message it describes", () => {
    expect(bundle.evaluate(input({})).decision).toBe("allow");
  });

  it("a tool call that looks like a message (toolClass message, no message facts) is not matched", () => {
    expect(bundle.evaluate(input()).decision).toBe("deny");
  });

  it("each field narrows: another sender, recipient, primitive, payload type or a deeper message is denied", () => {
    for (const m of [
      { from: "mallory" },
      { to: "mallory" },
      { primitive: "race" as const },
      { payloadType: "escalation" as const },
      { depth: 3 },
    ]) {
      expect(bundle.evaluate(input(m)).decision, JSON.stringify(m)).toBe("deny");
    }
  });

  it("an unknown key or primitive in message: is a schema error", () => {
    for (const bad of ["{ from: a, sender: b }", "{ primitive: broadcast }", "{ depth: { lte: -1 } }"]) {
      const text = RULES.replace(/match: \{ message: .* \}\n/, `match: { message: ${bad} }\n`);
      expect(() => loadPolicyBundle({ yaml: [{ name: "bad.yaml", text }] }), bad).toThrow(/message/);
    }
  });
});
