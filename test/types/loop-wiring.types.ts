// Type-level test: the real layers satisfy the loop's ports, so a change on either side
// that breaks the wiring fails `tsc --noEmit -p .`. Nothing runs at import.
import type { ExecutionResult } from "../../src/executors/index.js";
import type { ExecutionTicket, Gate } from "../../src/gate/index.js";
import type { Journal } from "../../src/journal/index.js";
import type {
  AuthorizingGate,
  ContractSource,
  GovernedResult,
  JournalPort,
  ModelTool as LoopModelTool,
} from "../../src/loop/index.js";
import type { ContractRegistry, ModelTool } from "../../src/tools/index.js";

export function executorResultsFit(r: ExecutionResult<unknown>): GovernedResult {
  return r;
}

export function journalFits(j: Journal): JournalPort {
  return j;
}

export function registryFits(r: ContractRegistry): ContractSource {
  return r;
}

export function modelViewFits(t: ModelTool): LoopModelTool {
  return t;
}

export function gateFits(g: Gate): AuthorizingGate<ExecutionTicket> {
  return g;
}
