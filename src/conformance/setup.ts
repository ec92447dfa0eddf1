// What scenarios add to the deployment under test before they observe it: a policy file of
// their own, placed first (priority 0, first match wins), for the one tool they probe; an
// approver with a fresh key. The deployment's own rules still decide every other call.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { generateKeyPair, type KeyPair } from "../crypto/index.js";
import type { RuntimeConfig } from "../runtime/index.js";

/** A rule of the scenario's policy file (YAML rule fields). */
export type ScenarioRule = Record<string, unknown> & { id: string; decision: string };

/** The configuration with `rules` in a first policy file; refused when the policy is not files. */
export function withRules(c: RuntimeConfig, dir: string, rules: readonly ScenarioRule[]): RuntimeConfig {
  if (!Array.isArray(c.policy))
    throw new Error("the deployment's policy is an engine object, not files: a scenario cannot add a rule");
  const file = join(dir, "conformance-scenario.yaml");
  const doc = {
    name: "conformance-scenario",
    version: "1.0",
    rules: rules.map((r) => ({ name: r.id, priority: 0, reason: "conformance scenario", ...r })),
  };
  writeFileSync(file, stringify(doc), { mode: 0o600 });
  return { ...c, policy: [file, ...(c.policy as readonly string[])] };
}

/** The configuration with a Cedar policy file of the scenario's added to the deployment's policy. */
export function withCedar(c: RuntimeConfig, dir: string, text: string): RuntimeConfig {
  if (!Array.isArray(c.policy))
    throw new Error("the deployment's policy is an engine object, not files: a scenario cannot add a rule");
  const file = join(dir, "conformance-scenario.cedar");
  writeFileSync(file, text, { mode: 0o600 });
  return { ...c, policy: [...(c.policy as readonly string[]), file] };
}

export interface ScenarioApprover {
  id: string;
  role: string;
  key: KeyPair;
}

/** A fresh approver (its own Ed25519 key) the configuration requires signatures from. */
export function withApprover(c: RuntimeConfig): { config: RuntimeConfig; approver: ScenarioApprover } {
  const approver = {
    id: "conformance-approver",
    role: "conformance-approver",
    key: generateKeyPair("ed25519"),
  };
  const pem = approver.key.publicKey.export({ format: "pem", type: "spki" }).toString();
  return { config: { ...c, approvers: { ...(c.approvers ?? {}), [approver.id]: [pem] } }, approver };
}
