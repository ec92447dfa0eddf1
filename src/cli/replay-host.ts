// The CLI's ReplayHost: a pinned (or changed) bundle opened exactly as `warden run` opens
// its files — the same gate configuration loader, built-in file tools and contract
// routing — over a throwaway journal in a private temp directory, on the replay's clock,
// with the recorder off. Nothing it opens can execute: replay only evaluates.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ReplayHost } from "../evidence/index.js";
import { openRuntime } from "./runtime.js";

export const cliReplayHost: ReplayHost = {
  async open(bundle, o) {
    const dir = mkdtempSync(join(tmpdir(), "warden-replay-"));
    try {
      const rt = await openRuntime({
        contracts: bundle.contractsDir,
        policy: bundle.policy,
        ...(bundle.gateConfig !== undefined ? { config: bundle.gateConfig } : {}),
        principal: o.principal,
        db: join(dir, "replay.db"),
        sandbox: dir,
        record: false,
        clock: o.clock,
      });
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
