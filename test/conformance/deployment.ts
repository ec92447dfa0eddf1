// Deployments for the conformance tests: the example sidecar deployment as a library target
// (the same way `warden conformance` builds it), and deliberately broken variants — each a
// real runtime with one guarantee taken away — that a check must fail on.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LibraryTarget } from "../../src/conformance/index.js";
import { generateKeyPair, parsePublicKey } from "../../src/crypto/index.js";
import type { GatePolicy } from "../../src/gate/index.js";
import { CommunicationGate } from "../../src/messaging/index.js";
import { loadPolicyBundle } from "../../src/policy/index.js";
import {
  composeRuntime,
  type Runtime,
  type RuntimeConfig,
  type RuntimeDeps,
} from "../../src/runtime/index.js";
import { loadSidecarConfig, sidecarRuntimeConfig } from "../../src/server/index.js";
import { approverKeyMap, liftQuarantine } from "../../src/trust/index.js";
import { REPO_ROOT } from "../helpers/repo.js";

export const EXAMPLE = join(REPO_ROOT, "examples", "sidecar", "sidecar.yaml");

export function exampleTarget(over: Partial<LibraryTarget> = {}): LibraryTarget {
  const config = sidecarRuntimeConfig(loadSidecarConfig(EXAMPLE), generateKeyPair("ed25519"));
  return {
    kind: "library",
    label: "example",
    config,
    agent: "demo-agent",
    probe: { tool: "echo", parameters: { message: "conformance" }, textArg: "message" },
    ...over,
  };
}

type Open = (c: RuntimeConfig, d: RuntimeDeps) => Promise<Runtime>;

/** A runtime whose fields are the real one's except those `change` replaces. */
export function altered(change: (rt: Runtime) => Partial<Record<keyof Runtime, unknown>>): Open {
  return async (c, d) => {
    const rt = await composeRuntime(c, d);
    const over = change(rt);
    return new Proxy(rt, {
      get: (target, key, receiver) =>
        Object.hasOwn(over, key) ? over[key as keyof Runtime] : Reflect.get(target, key, receiver),
    });
  };
}

/** Broken: the process executor runs the contract's command for any object, ticket or not. */
export const ticketless: Open = altered((rt) => ({
  executors: {
    ...rt.executors,
    process: {
      execute: async (
        ticket: unknown,
        binding: { build(p: Record<string, unknown>): { argv: string[] } },
      ) => {
        // Whatever it was handed, it runs the probe's command.
        void ticket;
        const params = { message: "conformance" };
        const [cmd, ...args] = binding.build(params).argv;
        const stdout = execFileSync(cmd as string, args);
        return { ok: true, output: { stdout }, evidence: { output_hash: null } };
      },
    },
  },
}));

/** Broken: closing the runtime's journal does not stop the Gate (it decides on, unrecorded by it). */
export const journalIgnored: Open = altered((rt) => ({
  journal: new Proxy(rt.journal, {
    get: (target, key, receiver) => (key === "close" ? async () => {} : Reflect.get(target, key, receiver)),
  }),
}));

/** Broken: the journal's entries come back without their signatures (verification cannot hold). */
export const unsignedJournal: Open = altered((rt) => ({
  store: new Proxy(rt.store, {
    get(target, key, receiver) {
      if (key !== "entries") return Reflect.get(target, key, receiver);
      return async function* (from?: number, to?: number) {
        for await (const e of target.entries(from, to))
          yield "signature" in e ? { ...e, signature: Buffer.alloc(64).toString("base64url") } : e;
      };
    },
  }),
}));

/** Broken: a Gate that lets the model's text decide (an "approved" rationale is allowed). */
export const textSwayed: Open = altered((rt) => ({
  gate: new Proxy(rt.gate, {
    get(target, key, receiver) {
      if (key !== "authorize") return Reflect.get(target, key, receiver);
      return async (raw: { rationale?: string }, signal?: AbortSignal) => {
        const o = await target.authorize(raw, signal);
        return raw.rationale?.includes("approved")
          ? { ...o, decision: "allow", reasonCodes: ["RATIONALE"] }
          : o;
      };
    },
  }),
}));

/** Broken: a lenient Gate that repairs invalid parameters into the probe's valid ones. */
export function lenientGate(valid: Record<string, unknown>): Open {
  return altered((rt) => ({
    gate: new Proxy(rt.gate, {
      get(target, key, receiver) {
        if (key !== "authorize") return Reflect.get(target, key, receiver);
        return (raw: Record<string, unknown>, signal?: AbortSignal) =>
          target.authorize(raw.tool === "echo" ? { ...raw, parameters: valid } : raw, signal);
      },
    }),
  }));
}

/** Broken: the policy engine is handed a fresh session every time (no accumulated context). */
export const forgetful: Open = (c, d) => {
  const inner = d.policy as GatePolicy;
  const policy: GatePolicy = {
    policyBundleHash: inner.policyBundleHash,
    evaluate: (input) =>
      inner.evaluate({ ...input, session: { ...input.session, recentEvents: [], perToolCalls: {} } }),
  };
  return composeRuntime(c, { ...d, policy });
};

/** Broken: a runtime that loads only the YAML policy files and ignores Cedar ones. */
export const cedarIgnored: Open = (c, d) => {
  const yamlOnly = (c.policy as string[]).filter((f) => !f.endsWith(".cedar"));
  return composeRuntime(c, { ...d, policy: loadPolicyBundle(yamlOnly) });
};

/** Broken: capability grants are issued with far more uses than asked for. */
export const generousGrants: Open = altered((rt) => ({
  grant: (runId: string, g: Parameters<Runtime["grant"]>[1], by?: string) =>
    rt.grant(runId, { ...g, maxUses: 100 }, by),
}));

/** Broken: the step-up approvals do not require the configured approver signatures. */
export const unsignedApprovals: Open = (c, d) => {
  const { approvers: _a, ...rest } = c;
  return composeRuntime(rest, d);
};

/** Broken: the policy decides the first call as the deployment does and denies everything after. */
export function flakyPolicy(): Open {
  let n = 0;
  return (c, d) => {
    const real = composeRuntime(c, d);
    return real.then(async (rt) => {
      const inner = rt.policy;
      await rt.close();
      const policy: GatePolicy = {
        policyBundleHash: inner.policyBundleHash,
        evaluate: (input) =>
          n++ === 0 ? inner.evaluate(input) : { ...inner.evaluate(input), decision: "deny" },
      };
      return composeRuntime(c, { ...d, policy });
    });
  };
}

/** A policy file (in `dir`) that allows every call, appended to the deployment's policy. */
export function allowAll(dir: string, config: RuntimeConfig): RuntimeConfig {
  const file = join(dir, "allow-all.yaml");
  writeFileSync(
    file,
    'name: allow-all\nversion: "1.0"\nrules:\n  - { id: allow-all, name: all, priority: 800, match: {}, decision: allow, reason: open }\n',
  );
  return {
    ...config,
    policy: [...(config.policy as string[]), file],
    gate: { ...config.gate, requireContract: false },
  };
}

/** A runtime whose APAE members in `make`'s result are replaced (the rest of APAE is the real one). */
function apaeReplaced(
  make: (rt: Runtime, c: RuntimeConfig) => Partial<Record<keyof NonNullable<Runtime["apae"]>, unknown>>,
): Open {
  return async (c, d) => {
    const rt = await composeRuntime(c, d);
    const apae = rt.apae;
    if (apae === undefined) return rt;
    const over = make(rt, c);
    // Members are read from the real objects (their methods use private fields), bound to them.
    const own = (target: object, key: string | symbol) => {
      const v: unknown = Reflect.get(target, key, target);
      return typeof v === "function" ? v.bind(target) : v;
    };
    const broken = new Proxy(apae, {
      get: (target, key) => (Object.hasOwn(over, key) ? over[key as keyof typeof over] : own(target, key)),
    });
    return new Proxy(rt, { get: (target, key) => (key === "apae" ? broken : own(target, key)) });
  };
}

/** A runtime whose `apae.lift` is replaced. */
const liftReplaced = (make: (rt: Runtime, c: RuntimeConfig) => (record: unknown) => Promise<unknown>): Open =>
  apaeReplaced((rt, c) => ({ lift: make(rt, c) }));

/** Broken: the periodic behaviour check never runs (the tick ends due quarantines only). */
export const behaviourUnchecked: Open = apaeReplaced((rt) => ({
  tick: async () => {
    await rt.apae?.engine.tick();
  },
}));

const subjectOf = (record: unknown) => String((record as { lift?: { subject?: unknown } }).lift?.subject);

/** Broken (the gap APAE-LIFT was written for): a signed lift ends the trust table's quarantine only. */
export const trustOnlyLift: Open = liftReplaced((rt, c) => {
  const keys = approverKeyMap(Object.values(c.approvers ?? {}).flatMap((pems) => pems.map(parsePublicKey)));
  return async (record) => {
    const engine = rt.apae?.engine;
    if (engine === undefined) throw new Error("no trust engine");
    const r = await liftQuarantine(engine, record, keys);
    return r.ok ? { ok: true, subject: subjectOf(record), seq: 0 } : r;
  };
});

/** Broken: any record naming a subject lifts it, signed or not. */
export const uncheckedLift: Open = liftReplaced((rt) => async (record) => {
  await rt.sessions.principals.lift(subjectOf(record));
  return { ok: true, subject: subjectOf(record), seq: 0 };
});

/** Broken: the communication gate forgets every nonce (a replayed message is taken again). */
export const amnesiacMessages: Open = (c, d) => {
  const principals = c.gate.principals;
  return altered((rt) => ({
    messages: {
      ...rt.messages,
      gate: new CommunicationGate({
        directory: rt.messages.directory,
        policy: rt.policy,
        principal: (id) => (typeof principals === "function" ? principals(id) : principals[id]),
        sessions: rt.sessions,
        journal: rt.journal,
        nonces: { claim: () => "claimed", seen: () => false },
        clock: Date.now,
      }),
    },
  }))(c, d);
};

/** Broken: a delegated run is started as a plain run (the chain is never verified, no ceiling). */
export const chainIgnored: Open = altered((rt) => ({
  startDelegatedRun: (principal: string) => rt.startRun(principal),
}));

/** Broken: a runtime that drops its process executor's sandbox settings (every tool in the process tier). */
export const sandboxIgnored: Open = (c, d) => {
  const p = c.executors?.process;
  if (p === undefined) return composeRuntime(c, d);
  const { sandbox: _dropped, ...rest } = p;
  return composeRuntime({ ...c, executors: { ...c.executors, process: rest } }, d);
};
