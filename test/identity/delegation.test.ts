// Delegation chains as attacks: a link that widens any field is refused naming the link
// and the field; a compromised middle key cannot escalate (a wider next link is refused,
// a re-signed link fails its signature); splicing, root swaps, depth, expiry, garbage.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { generateKeyPair, type KeyPair } from "../../src/crypto/index.js";
import {
  type DelegatedGrantInput,
  type DelegationLink,
  issueLink,
  verifyChain,
  widening,
} from "../../src/identity/delegation/index.js";

const NOW = 1_800_000_000;
const keys = {
  maker: generateKeyPair("ed25519"),
  deployer: generateKeyPair("p256"),
  agent: generateKeyPair("ed25519"),
  sub: generateKeyPair("ed25519"),
};

const ROOT: DelegatedGrantInput = {
  tools: ["http:*", "mailer", "file:read"],
  budgets: { toolCalls: 100, cost: 10 },
  dataClasses: ["public", "internal", "confidential"],
  expiresAt: NOW + 3600,
};
const DEPLOYER: DelegatedGrantInput = {
  ...ROOT,
  tools: ["http:get", "mailer"],
  budgets: { toolCalls: 50, cost: 5 },
};
const AGENT: DelegatedGrantInput = {
  ...DEPLOYER,
  dataClasses: ["public", "internal"],
  expiresAt: NOW + 1800,
};
const SUB: DelegatedGrantInput = { ...AGENT, tools: ["mailer"], budgets: { toolCalls: 5, cost: 1 } };

function link(
  from: [string, KeyPair],
  to: [string, KeyPair],
  grant: DelegatedGrantInput,
  prev?: DelegationLink,
) {
  return issueLink({
    delegator: { id: from[0], key: from[1] },
    delegate: { id: to[0], publicKey: to[1].publicKey },
    grant,
    ...(prev !== undefined ? { prev } : {}),
    iat: NOW,
  });
}

function chain(sub: DelegatedGrantInput = SUB): DelegationLink[] {
  const l1 = link(["maker", keys.maker], ["deployer", keys.deployer], DEPLOYER);
  const l2 = link(["deployer", keys.deployer], ["agent", keys.agent], AGENT, l1);
  const l3 = link(["agent", keys.agent], ["sub-agent", keys.sub], sub, l2);
  return [l1, l2, l3];
}

const verify = (c: unknown, maxDepth?: number) =>
  verifyChain(c, {
    roots: [keys.maker.publicKey],
    now: NOW,
    ...(maxDepth !== undefined ? { maxDepth } : {}),
  });

describe("delegation chains", () => {
  it("a narrowing chain maker → deployer → agent → sub-agent verifies to the last grant", () => {
    const r = verify(chain());
    expect(r).toMatchObject({ ok: true, delegate: "sub-agent", delegator: "agent", depth: 3 });
    if (r.ok) expect(r.grant.tools).toEqual(["mailer"]);
  });

  it("an attacker holding the agent's key issues link 3 with more tools: refused at link 3, tools", () => {
    const r = verify(chain({ ...SUB, tools: ["mailer", "http:post"] }));
    expect(r).toMatchObject({ ok: false, code: "ERR_DELEGATION_WIDENS", link: 3, field: "tools" });
  });

  it("an attacker holding the agent's key re-signs link 2 wider: the signature fails", () => {
    const [l1, l2] = chain();
    const wider = { ...l2!.payload, grant: { ...l2!.payload.grant, tools: ["http:*", "mailer"] } };
    const resigned = issueLink({
      delegator: { id: "deployer", key: keys.agent },
      delegate: { id: "agent", publicKey: keys.agent.publicKey },
      grant: wider.grant,
      prev: l1!,
      iat: NOW,
    });
    // Signed by the key it holds: the chain says link 2 must be signed by the deployer's key.
    expect(verify([l1, resigned])).toMatchObject({ ok: false, code: "ERR_DELEGATION_BROKEN", link: 2 });
    // Keeping the deployer's key in the payload but signing with its own: the signature fails.
    const forged = { payload: { ...wider, delegator_key: l2!.payload.delegator_key }, sig: resigned.sig };
    expect(verify([l1, forged])).toMatchObject({ ok: false, code: "ERR_DELEGATION_INVALID", link: 2 });
  });

  it("a link that edits its grant after signing fails its signature", () => {
    const c = chain();
    const l3 = c[2]!;
    c[2] = {
      ...l3,
      payload: { ...l3.payload, grant: { ...l3.payload.grant, budgets: { toolCalls: 1, cost: 1 } } },
    };
    expect(verify(c)).toMatchObject({ ok: false, code: "ERR_DELEGATION_INVALID", link: 3 });
  });

  it.each([
    ["budgets.toolCalls", { ...SUB, budgets: { toolCalls: 51, cost: 1 } }],
    ["budgets.cost", { ...SUB, budgets: { toolCalls: 5 } }],
    ["dataClasses", { ...SUB, dataClasses: ["public", "secret"] }],
    ["expiresAt", { ...SUB, expiresAt: NOW + 1801 }],
    ["tools", { ...SUB, tools: ["*"] }],
    ["tools", { ...SUB, tools: ["http:*"] }],
  ] as [string, DelegatedGrantInput][])(
    "a sub-agent link that widens %s is refused naming link 3 and the field",
    (field, grant) => {
      expect(verify(chain(grant))).toMatchObject({
        ok: false,
        code: "ERR_DELEGATION_WIDENS",
        link: 3,
        field,
      });
    },
  );

  it("a chain rooted in a key nobody trusts is refused", () => {
    const rogue = generateKeyPair("ed25519");
    const l1 = link(["maker", rogue], ["deployer", keys.deployer], ROOT);
    expect(verify([l1])).toMatchObject({ ok: false, code: "ERR_DELEGATION_BROKEN", link: 1 });
  });

  it("a link spliced in from another chain is refused", () => {
    const a = chain();
    const other = link(["maker", keys.maker], ["deployer", keys.deployer], {
      ...DEPLOYER,
      tools: ["http:*"],
    });
    const l2 = link(
      ["deployer", keys.deployer],
      ["agent", keys.agent],
      { ...AGENT, tools: ["http:*"] },
      other,
    );
    expect(verify([a[0], l2])).toMatchObject({ ok: false, code: "ERR_DELEGATION_BROKEN", link: 2 });
  });

  it("a chain deeper than the configured depth is refused before any signature is checked", () => {
    expect(verify(chain(), 2)).toMatchObject({ ok: false, code: "ERR_DELEGATION_DEPTH", link: 3 });
  });

  it("an expired link is refused", () => {
    const r = verifyChain(chain(), { roots: [keys.maker.publicKey], now: NOW + 1800 });
    expect(r).toMatchObject({ ok: false, code: "ERR_DELEGATION_EXPIRED", link: 2 });
  });

  it("garbage of any shape is refused, never thrown (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const r = verify(v);
        expect(r.ok).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it("narrowing is transitive over random grants (property)", () => {
    const grant = fc.record({
      tools: fc.subarray(["http:*", "http:get", "mailer", "file:read", "*"]),
      budgets: fc.record({ toolCalls: fc.nat(100) }, { requiredKeys: [] }),
      dataClasses: fc.subarray(["public", "internal", "secret"]),
      expiresAt: fc.integer({ min: NOW + 1, max: NOW + 100 }),
    });
    fc.assert(
      fc.property(grant, grant, grant, (a, b, c) => {
        if (widening(a, b) === undefined && widening(b, c) === undefined)
          expect(widening(a, c)).toBeUndefined();
      }),
      { numRuns: 500 },
    );
  });
});
