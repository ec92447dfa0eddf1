// The `flow:` match of policy rules (src/policy/yaml-match.ts): `designated` and `foundIn`
// decide on the Gate's flow facts; a call without flow facts does not match (fails closed).
import { describe, expect, it } from "vitest";
import { loadPolicyBundle, type PolicyFlow } from "../../src/policy/index.js";
import { mkInput } from "./helpers.js";

const bundle = loadPolicyBundle({
  yaml: [
    {
      name: "p.yaml",
      text: `name: t
rules:
  - id: link-from-page
    name: page link
    priority: 10
    match: { toolClass: assistant, action: fetch, flow: { foundIn: [web] } }
    decision: require-approval
    reason: page link
  - id: link-undesignated
    name: listing link
    priority: 20
    match: { toolClass: assistant, action: fetch, flow: { copied: true, designated: false, webRequested: false } }
    decision: require-approval
    reason: listing link
  - id: allow-fetch
    name: fetch
    priority: 100
    match: { toolClass: assistant, action: fetch }
    decision: allow
    reason: ok
`,
    },
  ],
});

const flow = (over: Partial<PolicyFlow>): PolicyFlow => ({
  targets: ["url"],
  copied: [],
  copiedSources: [],
  namedSources: [],
  fromRequest: false,
  untargeted: false,
  designated: true,
  foundIn: [],
  webRequested: false,
  unsourced: [],
  dictatedNumbers: [],
  sensitive: [],
  ...over,
});
const decide = (f: PolicyFlow | undefined) =>
  bundle.evaluate({ ...mkInput("assistant", "fetch", { url: "x" }), ...(f ? { flow: f } : {}) });

describe("flow: designated and foundIn", () => {
  it("a destination found on a fetched page needs a human, even when vouched for", () => {
    expect(decide(flow({ foundIn: ["tool-output", "web"] })).decision).toBe("step_up");
  });

  it("a destination copied from output the user did not designate needs a human", () => {
    const f = flow({ copied: ["url"], copiedSources: ["tool-output"], designated: false });
    expect(decide(f).decision).toBe("step_up");
  });

  it("an undesignated link is followed when the request itself asks for the web", () => {
    const f = flow({
      copied: ["url"],
      copiedSources: ["tool-output"],
      designated: false,
      webRequested: true,
    });
    expect(decide(f).decision).toBe("allow");
  });

  it("a link copied from a designated record, found on no page, is fetched", () => {
    const f = flow({ copied: ["url"], copiedSources: ["tool-output"], foundIn: ["tool-output"] });
    expect(decide(f).decision).toBe("allow");
  });

  it("without flow facts a flow rule does not evaluate and the bundle fails closed", () => {
    expect(decide(undefined).decision).toBe("deny");
  });
});

describe("flow: sensitive", () => {
  const secrets = loadPolicyBundle({
    yaml: [
      {
        name: "s.yaml",
        text: `name: s
rules:
  - id: secret-egress
    name: card
    priority: 10
    match: { toolClass: assistant, action: send, flow: { sensitive: true } }
    decision: require-approval
    reason: card
  - id: allow-send
    name: send
    priority: 100
    match: { toolClass: assistant, action: send }
    decision: allow
    reason: ok
`,
      },
    ],
  });
  const send = (f: PolicyFlow | undefined) =>
    secrets.evaluate({ ...mkInput("assistant", "send", { body: "x" }), ...(f ? { flow: f } : {}) });

  it("a send carrying a card number the request does not hold needs a human", () => {
    expect(send(flow({ targets: ["to"], sensitive: ["body"] })).decision).toBe("step_up");
  });

  it("a send without one is allowed; without flow facts the rule does not evaluate and the bundle fails closed", () => {
    expect(send(flow({ targets: ["to"] })).decision).toBe("allow");
    expect(send(undefined).decision).toBe("deny");
  });
});
