// OATS E4 (multi-tier sandboxing: "configurable sandboxing tiers for agent execution
// isolation"), as a scenario on the namespace tier (bubblewrap, docs/sandbox.md): the
// scenario makes the namespace tier the default of the deployment's own sandbox settings
// (the strictest tier of a call wins, so nothing is weakened), runs the probe through the
// Gate, then redeems a second probe ticket with the probe's binding running a shell script
// of the scenario's that reports what the process can see: the host's /etc, the scenario's
// own scratch directory, the network interfaces and its process id. In the namespace tier
// the first two are hidden, only loopback exists and the process is near pid 1. A host
// without bubblewrap fails the check with how to fix it; a deployment that declares no
// sandbox settings (or has no process executor) is not-configured for it.
import { bindingForContract, type ProcessBinding } from "../executors/index.js";
import { ticketOf } from "../gate/index.js";
import type { RuntimeConfig } from "../runtime/index.js";
import { describeOutcome, probeOf, type Scenario, withScenario } from "./scenario.js";
import type { LibraryTarget, Observation } from "./types.js";

const FIX =
  "install bubblewrap (Debian: apt-get install bubblewrap) and allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1)";

/** The namespace tier as the default tier (a container default is stricter and kept). */
function withNamespaceTier(c: RuntimeConfig): RuntimeConfig {
  const p = c.executors?.process;
  if (p === undefined) return c;
  const sandbox = p.sandbox ?? {};
  const tier = sandbox.tier === "container" ? "container" : "namespace";
  return { ...c, executors: { ...c.executors, process: { ...p, sandbox: { ...sandbox, tier } } } };
}

const script = (scratch: string) =>
  [
    `for p in /etc/passwd '${scratch}'; do if [ -e "$p" ]; then echo "visible:$p"; else echo "hidden:$p"; fi; done`,
    `echo "netdevs:$(grep -c : /proc/net/dev)"`,
    `echo "pid:$$"`,
  ].join("; ");

/** Runs the scenario's script with the probe's binding and a fresh Gate ticket for the probe. */
async function look(s: Scenario, t: LibraryTarget): Promise<string> {
  const probe = probeOf(t, s.rt);
  const contract = s.rt.contracts?.get(probe.tool);
  const exec = s.rt.executors.process;
  if (contract === undefined || exec === undefined) return "no process executor";
  const b = bindingForContract(contract);
  if (b.kind !== "process") return `${probe.tool} is not a process tool`;
  const outcome = await s.authorize(probe.tool, probe.parameters);
  if (outcome.decision !== "allow") return `probe ${describeOutcome(outcome)}`;
  const binding: ProcessBinding = {
    ...b.binding,
    build: () => ({ argv: ["/bin/sh", "-c", script(s.dir)] }),
  };
  const r = await exec.execute(ticketOf(outcome), binding);
  return r.ok ? r.output.stdout.toString("utf8").trim().replace(/\n/g, " ") : `${r.code}: ${r.message}`;
}

function isolated(seen: string): boolean {
  const pid = Number(/pid:(\d+)/.exec(seen)?.[1] ?? Number.NaN);
  return (
    seen.includes("hidden:/etc/passwd") &&
    !seen.includes("visible:") &&
    /netdevs:1\b/.test(seen) &&
    Number.isFinite(pid) &&
    pid < 10
  );
}

export async function namespaceSandbox(t: LibraryTarget): Promise<Observation> {
  const process = t.config.executors?.process;
  if (process === undefined)
    return {
      pass: false,
      observed: "",
      skipped: "the deployment has no process executor (nothing to sandbox)",
    };
  if (process.sandbox === undefined)
    return {
      pass: false,
      observed: "",
      skipped: "the deployment declares no sandbox settings (executors.process.sandbox)",
    };
  return withScenario(
    t,
    async (s) => {
      const probe = probeOf(t, s.rt);
      const { outcome, executed } = await s.call(probe.tool, probe.parameters);
      if (executed === undefined) return { pass: false, observed: `probe ${describeOutcome(outcome)}` };
      if (!executed.ok) {
        const fix = executed.code === "ERR_EXEC_SANDBOX_UNAVAILABLE" ? `; to fix: ${FIX}` : "";
        return {
          pass: false,
          observed: `probe in the namespace tier: ${executed.code} (${executed.message})${fix}`,
        };
      }
      const seen = await look(s, t);
      return {
        pass: isolated(seen),
        observed: `probe executed in the namespace tier; inside it: ${seen}`,
      };
    },
    { config: withNamespaceTier },
  );
}
