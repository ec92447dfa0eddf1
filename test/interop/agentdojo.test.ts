// The AgentDojo harness against the shipped exports (../shared/agentdojo, read in place;
// WARDEN_AGENTDOJO overrides): no suite or tool name is hard-coded in the harness or the
// preset, the instruction detector is silent on every benign output and finds every
// injected one, and each suite, played on its own, keeps benign utility while both
// signals together refuse at least what either refuses alone.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { benignSteps } from "../../bench/agentdojo/protocol.js";
import { targetsMet } from "../../bench/agentdojo/report.js";
import { runSuite } from "../../bench/agentdojo/run.js";
import { fillOutput, loadSuite } from "../../bench/agentdojo/suite.js";
import { instructionFindings } from "../../src/context/index.js";
import { REPO_ROOT } from "../helpers/repo.js";

const EXPORT = resolve(
  process.env.WARDEN_AGENTDOJO || resolve(REPO_ROOT, "..", "shared", "agentdojo", "export"),
);
if (!existsSync(EXPORT))
  throw new Error(`AgentDojo export not found at ${EXPORT}; set WARDEN_AGENTDOJO to the export folder`);
const SUITES = readdirSync(EXPORT)
  .map((d) => join(EXPORT, d))
  .filter((d) => statSync(d).isDirectory())
  .sort();

function sources(): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  const walk = (p: string) => {
    if (statSync(p).isDirectory()) for (const f of readdirSync(p)) walk(join(p, f));
    else out.push({ file: p, text: readFileSync(p, "utf8") });
  };
  walk(resolve(REPO_ROOT, "bench", "agentdojo"));
  walk(resolve(REPO_ROOT, "bench", "agentdojo.ts"));
  walk(resolve(REPO_ROOT, "policies", "assistant-tools.yaml"));
  walk(resolve(REPO_ROOT, "src", "tools", "schema-contract.ts"));
  return out;
}

describe("AgentDojo exports", () => {
  it("has suites to play", () => {
    expect(SUITES.length).toBeGreaterThan(0);
  });

  it("no suite or tool name of any export appears in the harness, the preset or the contract mapping", () => {
    const files = sources();
    for (const dir of SUITES) {
      const suite = loadSuite(dir);
      const names = [suite.name, ...suite.tools.map((t) => t.name)];
      for (const name of names) {
        const re = new RegExp(
          `(^|[^A-Za-z0-9_])${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}($|[^A-Za-z0-9_])`,
          "i",
        );
        for (const f of files) expect(re.test(f.text), `${name} in ${f.file}`).toBe(false);
      }
    }
  });

  it("the detector finds nothing in any benign output and the attack in every injected one", () => {
    for (const dir of SUITES) {
      const suite = loadSuite(dir);
      for (const user of suite.userTasks) {
        for (const s of benignSteps(suite, user))
          expect(instructionFindings(s.output), `${suite.name} ${user.id}`).toEqual([]);
        const at = user.first_injected_call_index;
        if (at === null) continue;
        const ref = user.injected_outputs_template?.[at] ?? user.ground_truth_outputs[at];
        if (ref === undefined || ref === null) continue;
        for (const inj of suite.injectionTasks) {
          const out = fillOutput(suite, ref, inj.attack_text_in_outputs, "2024-01-01 00:00");
          expect(
            instructionFindings(out.error ?? out.value).length,
            `${suite.name} ${user.id} ${inj.id}`,
          ).toBeGreaterThan(0);
        }
      }
    }
  });

  for (const dir of SUITES) {
    it(`${dir.split("/").pop()} played on its own keeps benign utility and refuses what flow control can judge`, async () => {
      const rep = await runSuite(loadSuite(dir), {
        policy: [resolve(REPO_ROOT, "policies/assistant-tools.yaml")],
      });
      const base = rep.rows.find((r) => r.mode === "undefended")!;
      const w = rep.rows.find((r) => r.mode === "warden")!;
      const flow = rep.rows.find((r) => r.mode === "flow-only")!;
      const screening = rep.rows.find((r) => r.mode === "screening-only")!;
      const t = targetsMet(w, base);
      expect({ utility: t.utility, stepUps: t.stepUps }).toEqual({ utility: true, stepUps: true });
      // The ASR target (0) is printed by the bench, not asserted here: an attacker's choice
      // among clean records and a value the user also named are limits of flow control
      // (docs/threat-model.md#flow-control). Adding the screening's signal never lets more
      // attacks through than flow control alone, nor costs the utility the quarantine did.
      expect(w.attacksSucceeded).toBeLessThanOrEqual(flow.attacksSucceeded);
      expect(w.utilityUnderAttack).toBeGreaterThanOrEqual(screening.utilityUnderAttack);
      expect(rep.refusedTools).toEqual([]);
    }, 600_000); // four modes over every pair: minutes on a loaded machine
  }
});
