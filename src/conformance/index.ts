// Public face of the conformance layer (docs/conformance.md): the specifications'
// verification procedures (DARE's five checks, OATS C1–C7 and E1–E8, AARTS levels 1–3, the
// APAE profile requirements) as executable scenarios against a deployment — in this process
// from its configuration, or a sidecar over HTTP — and the pass table.
export { aartsChecks, aartsReport, type EngineOpener } from "./aarts.js";
export { ILLEGAL_PATHS, phaseOrderCompiles } from "./phase-check.js";
export { MAX_PROBE_BYTES, type ProbeParse, parseProbe } from "./probe.js";
export { formatSummary } from "./report.js";
export { allChecks, type RunOptions, runChecks } from "./runner.js";
export { type Scenario, scratchConfig, withScenario } from "./scenario.js";
export {
  type Check,
  type CheckResult,
  type ConformanceSummary,
  type LibraryTarget,
  type Observation,
  type ProbeCall,
  RESULTS,
  type ResultKind,
  SPECS,
  type Spec,
  type Target,
  type UrlTarget,
} from "./types.js";
