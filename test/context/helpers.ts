// Builders for context tests: parsed GateRequests, a store with a manual clock, and a
// helper that drives one call through prepare → recordDecision (→ recordResult).
import { expect } from "vitest";
import {
  type ContextConfigInput,
  createSessionStore,
  type Prepared,
  type PrepareOptions,
  type Session,
  type SessionStore,
} from "../../src/context/index.js";
import {
  GateRequest,
  type GateRequestInput,
  hasErrorCode,
  type TaintLabel,
} from "../../src/contracts/index.js";

export const RUN = "run-1";
export const AGENT = "agent-1";
export const T0 = Date.parse("2026-01-01T00:00:00Z");

export function req(
  p: Partial<GateRequestInput> & Pick<GateRequestInput, "toolClass" | "action">,
): GateRequest {
  return GateRequest.parse({ principalId: AGENT, runId: RUN, ...p });
}

export const web = (origin = "evil.example"): TaintLabel => ({ source: "web", origin });

export interface Harness {
  store: SessionStore;
  session: Session;
  clock: { now: number };
}

export function harness(config: ContextConfigInput = {}, originalRequest?: string): Harness {
  const clock = { now: T0 };
  const store = createSessionStore(config, { clock: () => clock.now });
  const session = store.open(
    originalRequest === undefined
      ? { runId: RUN, principalId: AGENT }
      : { runId: RUN, principalId: AGENT, originalRequest },
  );
  return { store, session, clock };
}

/** prepare, then record `decision` (default: the preDecision if any, else allow). */
export function decide(
  session: Session,
  request: GateRequest,
  decision?: "allow" | "deny" | "modify" | "step_up" | "defer",
  opts?: PrepareOptions,
): Prepared {
  const p = session.prepare(request, opts);
  const d = decision ?? (p.preDecision ? "deny" : "allow");
  session.recordDecision(p, d, p.preDecision?.reasonCodes ?? []);
  return p;
}

/** An allowed call whose observed output is `data` with `labels`. */
export function observe(
  session: Session,
  request: GateRequest,
  data: unknown,
  labels: TaintLabel[] = [],
): Prepared {
  const p = decide(session, request, "allow");
  session.recordResult(p, { data, taintLabels: labels, classification: "public" });
  return p;
}

export function expectCode(fn: () => unknown, code: string): void {
  let thrown: unknown;
  try {
    fn();
  } catch (err) {
    thrown = err;
  }
  expect(thrown, `expected ${code}`).toBeDefined();
  expect(hasErrorCode(thrown, code as never), String(thrown)).toBe(true);
}
