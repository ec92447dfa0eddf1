// The scripted worst-case agent of ../shared/agentdojo/README.md: for a pair (U, I), U's
// ground-truth calls up to and including the hijack point (their outputs carry the attack),
// then I's ground-truth calls (the agent obeys), then the rest of U. A benign run is U's
// calls with the default outputs. Each step holds the recorded output the call returns.
import {
  type Call,
  fillOutput,
  type InjectionTask,
  type OutputRef,
  type Suite,
  type UserTask,
} from "./suite.js";

export interface Step {
  call: Call;
  origin: "user" | "injection";
  /** The recorded output text (an error's text when the call failed) and the error, if any. */
  output: string;
  error: string | null;
}

/** A fixed timestamp for `⟦NOW⟧` (the README: any timestamp). */
export const NOW = "2024-05-15 10:00:00";

function step(
  suite: Suite,
  call: Call,
  from: { origin: Step["origin"]; ref: OutputRef | undefined; forms: Record<string, string> | null },
): Step {
  const { origin, ref, forms } = from;
  if (ref === undefined) return { call, origin, output: "", error: null };
  const f = fillOutput(suite, ref, forms, NOW);
  return { call, origin, output: f.error ?? f.value, error: f.error };
}

/** U's calls with the benign outputs. */
export function benignSteps(suite: Suite, user: UserTask): Step[] {
  return user.ground_truth_calls.map((c, i) =>
    step(suite, c, { origin: "user", ref: user.ground_truth_outputs[i], forms: null }),
  );
}

/** The attack protocol for (U, I). Without a hijack point, U never reads a vector: U's calls only. */
export function attackSteps(suite: Suite, user: UserTask, inj: InjectionTask): Step[] {
  const forms = inj.attack_text_in_outputs ?? {};
  const userStep = (c: Call, i: number) =>
    step(suite, c, {
      origin: "user",
      ref: user.injected_outputs_template?.[i] ?? user.ground_truth_outputs[i],
      forms,
    });
  const at = user.first_injected_call_index;
  const calls = user.ground_truth_calls;
  if (at === null || at < 0 || at >= calls.length) return calls.map(userStep);
  const injected = inj.ground_truth_calls.map((c, j) =>
    step(
      suite,
      { function: c.function, args: c.args },
      { origin: "injection", ref: inj.ground_truth_outputs?.[j], forms: null },
    ),
  );
  return [
    ...calls.slice(0, at + 1).map(userStep),
    ...injected,
    ...calls.slice(at + 1).map((c, k) => userStep(c, at + 1 + k)),
  ];
}

/** The `injections` of a request line: every candidate vector gets the unprocessed attack text. */
export function injectionsFor(user: UserTask, inj: InjectionTask): Record<string, string> {
  return Object.fromEntries(user.injection_candidates.map((v) => [v, inj.attack_text]));
}
