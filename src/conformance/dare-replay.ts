// DARE check 3: replay reproduces the run at the tool boundary. The scenario records a run
// (the replay recorder as the runtime's snapshot store, the bundle pinned in the journal),
// then replays it with the evidence layer's replay, which opens the pinned bundle in a
// fresh runtime of the same deployment and answers executions from the snapshots: every
// step must come out identical.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type EvidenceStore,
  openRecorder,
  pinBundle,
  type ReplayHost,
  replayRuns,
} from "../evidence/index.js";
import { composeRuntime } from "../runtime/index.js";
import { probeOf, scratchConfig, unknownTool, withScenario } from "./scenario.js";
import type { LibraryTarget, Observation } from "./types.js";

function replayHost(t: LibraryTarget): ReplayHost {
  return {
    async open(bundle, o) {
      const dir = mkdtempSync(join(tmpdir(), "warden-conformance-replay-"));
      try {
        const base = scratchConfig(t.config, dir);
        // Replay names the recorded run ids itself: the replaying runtime takes caller-named runs.
        const config = {
          ...base,
          gate: { ...base.gate, runs: "caller" as const },
          policy: bundle.policy,
          ...(base.contracts !== undefined
            ? { contracts: { ...base.contracts, dir: bundle.contractsDir } }
            : {}),
        };
        const rt = await (t.open ?? composeRuntime)(config, { clock: o.clock });
        return {
          gate: rt.gate,
          close: async () => {
            await rt.close();
            rmSync(dir, { recursive: true, force: true });
          },
        };
      } catch (err) {
        rmSync(dir, { recursive: true, force: true });
        throw err;
      }
    },
  };
}

export async function replayCheck(t: LibraryTarget): Promise<Observation> {
  const policy = t.config.policy;
  if (!Array.isArray(policy))
    return { pass: false, observed: "the policy is an engine object, not files: nothing to pin for replay" };
  let recorder: EvidenceStore | undefined;
  return withScenario(
    t,
    async (s) => {
      const store = recorder as EvidenceStore;
      const sources = { policy: policy as readonly string[], contractsDir: t.config.contracts?.dir };
      await pinBundle(s.rt.journal, store, sources, s.rt.policy.policyBundleHash);
      const probe = probeOf(t, s.rt);
      await s.call(probe.tool, probe.parameters);
      await s.authorize(unknownTool(), {});
      await s.call(probe.tool, probe.parameters);
      const key = join(s.dir, "journal.pub.pem");
      writeFileSync(key, s.rt.signer.publicKey.export({ format: "pem", type: "spki" }));
      const [report] = await replayRuns({
        db: join(s.dir, "journal.db"),
        keys: [key],
        host: replayHost(t),
        run: s.runId,
      });
      if (report === undefined) return { pass: false, observed: "the recorded run was not found for replay" };
      const c = report.counts;
      const bad = report.steps.find((x) => x.status !== "identical");
      return {
        pass: report.steps.length >= 3 && c.diverged === 0 && c.failed === 0,
        observed: `${report.steps.length} steps: ${c.identical} identical, ${c.diverged} diverged, ${c.failed} failed${bad ? ` (step ${bad.step} ${bad.tool}: ${bad.reason ?? bad.code ?? bad.status})` : ""}`,
      };
    },
    {
      deps: (dir) => {
        recorder = openRecorder(join(dir, "journal.db"));
        return { snapshots: recorder };
      },
    },
  );
}
