// OATS E5 (inter-agent communication governance: "enforce authorization policies on
// inter-agent communication with signed and encrypted messages"), as a scenario: two
// throwaway messaging identities (the agent and a peer principal the scenario adds), a
// rule of the scenario's allowing the agent to delegate a task to the peer. A governed
// message is delivered (journaled, its payload not in clear on the wire); the same message
// replayed, a message claiming the agent as sender but signed with another key, one whose
// ciphertext was altered, and one the policy does not allow are each refused.
import {
  generateMessagingKeys,
  type MessagingKeys,
  type Primitive,
  publicPem,
  seal,
} from "../messaging/index.js";
import type { RuntimeConfig } from "../runtime/index.js";
import { withScenario } from "./scenario.js";
import { withRules } from "./setup.js";
import type { LibraryTarget, Observation } from "./types.js";

const PEER = "conformance-peer";
const SECRET = "conformance-e5-plaintext-marker";

function withPeer(c: RuntimeConfig, keys: MessagingKeys[]): RuntimeConfig {
  const principals = c.gate.principals;
  if (typeof principals === "function") throw new Error("the deployment resolves principals by function");
  return {
    ...c,
    gate: { ...c.gate, principals: { ...principals, [PEER]: { id: PEER, roles: ["agent"] } } },
    messaging: {
      ...c.messaging,
      identities: {
        ...c.messaging?.identities,
        ...Object.fromEntries(keys.map((k) => [k.id, publicPem(k)])),
      },
    },
  };
}

export async function messageGovernance(t: LibraryTarget): Promise<Observation> {
  const sender = generateMessagingKeys(t.agent);
  const peer = generateMessagingKeys(PEER);
  const impostor = generateMessagingKeys(t.agent);
  const rule = {
    id: "conformance-message",
    decision: "allow",
    match: { toolClass: "message", message: { from: t.agent, to: PEER, primitive: "delegate" } },
  };
  return withScenario(
    t,
    async (s) => {
      const gate = s.rt.messages.gate;
      const recipient = s.rt.messages.directory.get(PEER);
      if (recipient === undefined)
        return { pass: false, observed: "the peer's messaging identity is not registered" };
      const make = (from: MessagingKeys, primitive: Primitive = "delegate") =>
        seal(
          {
            recipient: PEER,
            primitive,
            payloadType: "delegate_task",
            payload: { task: SECRET },
            runId: s.runId,
            depth: 1,
          },
          from,
          recipient,
          Date.now(),
        );
      const codeOf = (r: Awaited<ReturnType<typeof gate.submit>>) => (r.ok ? "DELIVERED" : r.code);
      const message = make(sender);
      const clear = JSON.stringify(message).includes(SECRET);
      const first = await gate.submit(message, t.agent);
      const allowed = first.ok ? "DELIVERED" : `${first.code} (${first.message})`;
      const received = (await gate.receive(PEER)).length;
      const replayed = codeOf(await gate.submit(message, t.agent));
      const forged = codeOf(await gate.submit(make(impostor), t.agent));
      const altered = make(sender);
      const flipped = Buffer.from(altered.ciphertext, "base64url");
      flipped[0] = (flipped[0] ?? 0) ^ 1;
      const tampered = codeOf(
        await gate.submit({ ...altered, ciphertext: flipped.toString("base64url") }, t.agent),
      );
      const unruled = codeOf(await gate.submit(make(sender, "send"), t.agent));
      const sent = (await s.entries()).filter((e) => e.type === "warden.message.sent").length;
      const refused = [replayed, forged, tampered, unruled].every((c) => c !== "DELIVERED");
      return {
        pass: allowed === "DELIVERED" && received === 1 && sent === 1 && refused && !clear,
        observed:
          `governed delegate → ${allowed} (received ${received}, ${sent} journaled, payload ${clear ? "IN CLEAR" : "encrypted"} on the wire); ` +
          `replayed → ${replayed}; another key as the sender → ${forged}; altered ciphertext → ${tampered}; ` +
          `a primitive no rule allows → ${unruled}`,
      };
    },
    { config: (c, dir) => withRules(withPeer(c, [sender, peer]), dir, [rule]) },
  );
}
