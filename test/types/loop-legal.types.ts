// Type-level test: the legal ORGA path compiles, with the only dynamic branch after
// observe() (OATS §4.3). Checked by `tsc --noEmit -p .`; nothing runs at import.
import {
  type AgentLoop,
  type LoopOptions,
  type LoopResult,
  runLoop,
  startLoop,
} from "../../src/loop/index.js";

export async function legalPath(options: LoopOptions): Promise<LoopResult> {
  let phase: AgentLoop<"reasoning"> = await startLoop(options);
  for (;;) {
    const checking: AgentLoop<"policy_check"> = await phase.reason();
    const dispatching: AgentLoop<"dispatching"> = await checking.gate();
    const observing: AgentLoop<"observing"> = await dispatching.act();
    const next = await observing.observe();
    if (next.phase === "terminated") {
      const reason: LoopResult["reason"] = next.reason;
      void reason;
      return next;
    }
    phase = next;
  }
}

export function driverCompiles(options: LoopOptions): Promise<LoopResult> {
  return runLoop(options, {
    onPolicyCheck: (p) => void p.proposals,
    onDispatching: (d) => void d.decisions,
    onObserving: (o) => void o.results,
  });
}
