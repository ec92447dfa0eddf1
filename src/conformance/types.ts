// The shapes of a conformance run: the specifications it covers, one check per verification
// procedure, and the result of running a check against a target. A result is pass, fail
// (with what was observed), not-configured (the check exists but the deployment does not turn
// on the feature it exercises, or a token it needs was not given: with what is missing) or
// not-implemented (no scenario for this kind of target: with why). Neither is ever counted as
// a pass, and a check that could not run on this kind of target says so.
import type { Runtime, RuntimeConfig, RuntimeDeps } from "../runtime/index.js";

export const SPECS = ["dare", "oats", "aarts", "apae"] as const;
export type Spec = (typeof SPECS)[number];

export const RESULTS = ["pass", "fail", "not-configured", "not-implemented"] as const;
export type ResultKind = (typeof RESULTS)[number];

/** What a scenario observed: pass or not, and what it saw (shown for a failure). */
export interface Observation {
  pass: boolean;
  observed: string;
  /** The scenario could not run on this target (what it needs): reported not-configured. */
  skipped?: string;
}

/** A call the deployment allows, used by scenarios that need an execution. */
export interface ProbeCall {
  tool: string;
  parameters: Record<string, unknown>;
  /** A string argument of the tool that scenarios vary (metacharacters, rule matching). */
  textArg?: string;
}

/**
 * A deployment in this process: its configuration as the composition root takes it. Every
 * scenario composes its own runtime from it in a private scratch directory (journal, state,
 * trust table), so no scenario touches the deployment's own files or another's state.
 */
export interface LibraryTarget {
  kind: "library";
  label: string;
  config: RuntimeConfig;
  /** The agent principal scenarios act as (one of the configured principals). */
  agent: string;
  /** A call the deployment allows; default: derived from its first contract. */
  probe?: ProbeCall;
  /** How a runtime is built (default composeRuntime); a test substitutes a broken one. */
  open?: (config: RuntimeConfig, deps: RuntimeDeps) => Promise<Runtime>;
}

/** A running sidecar: the agent token acts, the operator token reads and verifies the journal. */
export interface UrlTarget {
  kind: "url";
  url: string;
  agentToken: string;
  operatorToken?: string;
  /** An agent credential whose principal has the `host` role (the AARTS HTTP transport). */
  hostToken?: string;
  probe?: ProbeCall;
}

export type Target = LibraryTarget | UrlTarget;

/** One verification procedure of a specification, as an executable scenario per target kind. */
export interface Check {
  spec: Spec;
  id: string;
  title: string;
  /** Where the procedure comes from in the specification. */
  section: string;
  library?: (t: LibraryTarget) => Promise<Observation>;
  url?: (t: UrlTarget) => Promise<Observation>;
  /** Why the check has no scenario (neither runner given). */
  notImplemented?: string;
}

export interface CheckResult {
  spec: Spec;
  id: string;
  title: string;
  section: string;
  result: ResultKind;
  observed: string;
}

export interface ConformanceSummary {
  target: string;
  mode: Target["kind"];
  specs: Spec[];
  results: CheckResult[];
  counts: Record<ResultKind, number>;
  /** True when no implemented check failed. */
  passed: boolean;
}
