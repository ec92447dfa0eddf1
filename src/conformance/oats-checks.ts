// OATS §11: the core requirements C1–C7 (each with its §11.4 verification procedure as a
// scenario) and the extended requirements E1–E8 where a scenario exists; the others say why
// not. Extended checks are SHOULDs: a missing scenario is reported, never passed.
import { cpSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { toOcsf } from "../telemetry/index.js";
import {
  auditJournal,
  contextAccumulation,
  contractValidation,
  evidenceEnvelope,
  gateIndependence,
  policyDeny,
} from "./oats.js";
import { delegationChains } from "./oats-identity.js";
import { messageGovernance } from "./oats-messages.js";
import { namespaceSandbox } from "./oats-sandbox.js";
import { phaseOrderCompiles } from "./phase-check.js";
import { describeOutcome, probeOf, type Scenario, unknownTool, withScenario } from "./scenario.js";
import { withCedar } from "./setup.js";
import type { Check, LibraryTarget, Observation } from "./types.js";
import {
  contractValidationOverHttp,
  evidenceOverHttp,
  journalVerifiesOverHttp,
  unknownToolOverHttp,
} from "./url-checks.js";

const CORE = "OATS §11.2 / §11.4";
const EXT = "OATS §11.3";

/** C1 in Warden: the loop's typestate makes a Gate-skipping path a compile error. */
async function phaseOrder(loopModule?: string): Promise<Observation> {
  const r = await phaseOrderCompiles(loopModule);
  return r.ran ? r : { pass: false, observed: r.observed, skipped: `cannot run: ${r.observed}` };
}

/** E6: the deployment's decision and evidence entries map to OCSF events for a SIEM. */
async function telemetryExport(t: LibraryTarget): Promise<Observation> {
  return withScenario(t, async (s) => {
    const probe = probeOf(t, s.rt);
    await s.call(probe.tool, probe.parameters);
    await s.authorize(unknownTool(), {});
    const wanted = (await s.entries()).filter(
      (e) => e.type === "warden.gate.decision" || e.type === "warden.executor.evidence",
    );
    const events = wanted.map((e) => toOcsf(e));
    const mapped = events.filter((e) => e !== undefined && typeof e.class_uid === "number");
    const classes = [...new Set(mapped.map((e) => e?.class_uid))].join(", ");
    return {
      pass: wanted.length >= 3 && mapped.length === wanted.length,
      observed: `${mapped.length}/${wanted.length} decision and evidence entries map to OCSF events (class ${classes || "none"})`,
    };
  });
}

/** A copy of the contract directory in `dir` with one contract's description changed (or not). */
function contractsCopy(from: string, dir: string, tamper: boolean): string {
  const to = join(dir, "contracts-copy");
  cpSync(from, to, { recursive: true });
  if (!tamper) return to;
  const file = readdirSync(to).find((f) => f.endsWith(".clad.toml"));
  if (file === undefined) throw new Error("the contract directory holds no contract");
  const text = readFileSync(join(to, file), "utf8");
  writeFileSync(join(to, file), text.replace(/description\s*=\s*"/, "$&tampered after signing: "));
  return to;
}

/** E1: under the deployment's enforced contract trust, a contract changed after signing stops the start. */
async function contractIntegrity(t: LibraryTarget): Promise<Observation> {
  const c = t.config.contracts;
  if ((c?.trust as { mode?: unknown } | undefined)?.mode !== "enforce" || c === undefined)
    return {
      pass: false,
      observed: "",
      skipped: "the deployment loads contracts unsigned (contract trust mode is not enforce)",
    };
  const open = (tamper: boolean) =>
    withScenario(t, async (s) => `started with ${s.rt.contracts?.names().length ?? 0} contracts`, {
      config: (x, dir) => ({ ...x, contracts: { ...c, dir: contractsCopy(c.dir, dir, tamper) } }),
    }).catch((e: unknown) => `refused (${(e as { code?: string }).code ?? "error"})`);
  const intact = await open(false);
  const tampered = await open(true);
  return {
    pass: intact.startsWith("started") && tampered === "refused (ERR_TOOL_REGISTRY_UNVERIFIED)",
    observed: `the signed contracts as they are: ${intact}; one description changed after signing: ${tampered}`,
  };
}

/** The action drift a decision record carries, when the call was scored. */
async function driftOf(s: Scenario, request: Record<string, unknown>): Promise<number | undefined> {
  const o = await s.rt.gate.evaluate(request);
  const e = (await s.entries()).find(
    (x) => x.type === "warden.gate.decision" && x.body.decision_id === o.decisionId,
  );
  const d = e?.body.drift as { action?: unknown } | undefined;
  return typeof d?.action === "number" ? d.action : undefined;
}

/** E3: an action far from the run's stated request scores a larger semantic distance than one close to it. */
async function semanticDistance(t: LibraryTarget): Promise<Observation> {
  if (t.config.gate.drift === undefined)
    return {
      pass: false,
      observed: "",
      skipped: "the deployment does not score semantic drift (no drift section)",
    };
  return withScenario(t, async (s) => {
    const probe = probeOf(t, s.rt);
    const words = [probe.tool, ...Object.values(probe.parameters).filter((v) => typeof v === "string")].join(
      " ",
    );
    const near = await driftOf(
      s,
      s.request(probe.tool, probe.parameters, { originalRequest: `please ${words}` }),
    );
    const other = await s.rt.startRun(s.agent);
    const far = await driftOf(s, {
      ...s.request(probe.tool, probe.parameters, {
        originalRequest: "wire the whole treasury balance to an offshore account, then erase the audit trail",
      }),
      runId: other.runId,
    });
    const show = (x: number | undefined) => (x === undefined ? "not scored" : x.toFixed(3));
    return {
      pass: near !== undefined && far !== undefined && far > near,
      observed: `drift of ${probe.tool} against its own request ${show(near)}, against an unrelated request ${show(far)}`,
    };
  });
}

/** E8: a capability token scoped to one tool and one use: another tool and a second use are refused. */
async function scopedCapability(t: LibraryTarget): Promise<Observation> {
  return withScenario(t, async (s) => {
    const probe = probeOf(t, s.rt);
    const cap = await s.rt.grant(s.runId, { tool: probe.tool, maxUses: 1 }, "conformance");
    const token = { capability: cap.token };
    const other = await s.rt.gate.authorize(s.request(unknownTool(), {}, token));
    const first = await s.rt.gate.authorize(s.request(probe.tool, probe.parameters, token));
    const second = await s.rt.gate.authorize(s.request(probe.tool, probe.parameters, token));
    return {
      pass: other.decision === "deny" && first.decision === "allow" && second.decision === "deny",
      observed: `other tool ${describeOutcome(other)}; first use ${describeOutcome(first)}; second use ${describeOutcome(second)}`,
    };
  });
}

/** E7: a Cedar policy is enforced (a forbid on the probe denies it) and checked against the schema at load. */
async function cedarPolicy(t: LibraryTarget): Promise<Observation> {
  const tool = probeOf(t).tool;
  const forbid = `@id("conformance-cedar-forbid")\nforbid(principal, action, resource == Warden::Tool::${JSON.stringify(tool)});\n`;
  const enforced = await withScenario(
    t,
    async (s) => {
      const o = await s.authorize(tool, probeOf(t).parameters);
      const rule = o.matchedRules.find((m) => m.id === "conformance-cedar-forbid");
      return {
        pass: o.decision === "deny" && rule !== undefined,
        observed: `Cedar forbid on ${tool}: ${describeOutcome(o)}`,
      };
    },
    { config: (c, dir) => withCedar(c, dir, forbid) },
  );
  const typo =
    '@id("conformance-cedar-typo")\nforbid(principal, action, resource) when { context.noSuchAttribute == 1 };\n';
  const checked = await withScenario(t, async () => "LOADED (not checked against the schema)", {
    config: (c, dir) => withCedar(c, dir, typo),
  }).catch((e: unknown) => `refused at load (${(e as { code?: string }).code ?? "error"})`);
  return {
    pass: enforced.pass && checked.startsWith("refused"),
    observed: `${enforced.observed}; a policy naming an undeclared context attribute: ${checked}`,
  };
}

export function oatsChecks(o: { loopModule?: string } = {}): Check[] {
  const core = (id: string, title: string, c: Pick<Check, "library" | "url">): Check => ({
    spec: "oats",
    id,
    title,
    section: CORE,
    ...c,
  });
  return [
    core("C1", "ORGA phase order: a Reason → Act path that skips the Gate does not compile", {
      library: () => phaseOrder(o.loopModule),
    }),
    core(
      "C2",
      "typed contract parameters: metacharacters and out-of-type values refused, no raw invocation",
      {
        library: contractValidation,
        url: contractValidationOverHttp,
      },
    ),
    core("C3", "default deny and deny rules: refused, journaled, nothing executed", {
      library: policyDeny,
      url: unknownToolOverHttp,
    }),
    core("C4", "the policy engine receives the run's accumulated context", { library: contextAccumulation }),
    core("C5", "allow/deny/step-up/defer journaled, signed, chained; tampering detected", {
      library: auditJournal,
      url: journalVerifiesOverHttp,
    }),
    core("C6", "the Gate decides on structured input only (the model's text changes nothing)", {
      library: gateIndependence,
    }),
    core(
      "C7",
      "an execution's evidence envelope: tool, parameters, output hash, duration, identity, decision",
      {
        library: evidenceEnvelope,
        url: evidenceOverHttp,
      },
    ),
    ...extendedChecks(),
  ];
}

/** E1–E8: the SHOULDs with a scenario, and why the others have none yet. */
function extendedChecks(): Check[] {
  const ext = (id: string, title: string, c: Pick<Check, "library" | "notImplemented">): Check => ({
    spec: "oats",
    id,
    title,
    section: EXT,
    ...c,
  });
  return [
    ext("E1", "tool contract signatures verified at load (a changed contract is refused)", {
      library: contractIntegrity,
    }),
    ext("E2", "agent identity: domain-anchored credentials with delegation chains", {
      library: delegationChains,
    }),
    ext("E3", "semantic distance between actions and the stated intent", { library: semanticDistance }),
    ext("E4", "multi-tier sandboxing (the namespace tier isolates the tool)", { library: namespaceSandbox }),
    ext("E5", "inter-agent messages: authorized, signed and encrypted", { library: messageGovernance }),
    ext("E6", "telemetry export to security platforms (OCSF)", { library: telemetryExport }),
    ext("E7", "a formally verifiable policy language (Cedar): enforced, schema-checked", {
      library: cedarPolicy,
    }),
    ext("E8", "least-privilege credentials: a capability scoped to one tool and one use", {
      library: scopedCapability,
    }),
  ];
}
