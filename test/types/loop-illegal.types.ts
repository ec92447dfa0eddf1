// Type-level tests: every illegal ORGA transition must fail to compile. Checked by
// `tsc --noEmit -p .` (part of `npm test`); each `@ts-expect-error` fails the build if
// the line below it ever compiles, i.e. if an illegal transition becomes legal.
// Nothing runs at import: the checks sit in a function that is never called.
import {
  type AgentLoop,
  Dispatching,
  Observing,
  type PolicyCheck,
  type Reasoning,
} from "../../src/loop/index.js";

export async function illegalTransitions(
  reasoning: AgentLoop<"reasoning">,
  checking: AgentLoop<"policy_check">,
  dispatching: AgentLoop<"dispatching">,
  observing: AgentLoop<"observing">,
): Promise<void> {
  // OATS §4.2 (1) skipping the policy check: Reasoning → Dispatching/act.
  // @ts-expect-error act() does not exist on Reasoning
  await reasoning.act();
  // @ts-expect-error the Reasoning → PolicyCheck result cannot act either: gate() must come first
  await (await reasoning.reason()).act();

  // OATS §4.2 (2) dispatching without reasoning: PolicyCheck → Observing.
  // @ts-expect-error observe() does not exist on PolicyCheck
  await checking.observe();

  // OATS §4.2 (3) observing results without dispatching: Reasoning → Observing.
  // @ts-expect-error observe() does not exist on Reasoning
  await reasoning.observe();
  // @ts-expect-error nor on Dispatching: act() must run before observe()
  await dispatching.observe();

  // Reasoning twice without observing.
  // @ts-expect-error reason() does not exist on PolicyCheck
  await (await reasoning.reason()).reason();
  // @ts-expect-error nor on Dispatching
  await dispatching.reason();
  // @ts-expect-error nor on Observing: observe() decides whether another turn happens
  await observing.reason();

  // Gating twice, or gating an answer that was already dispatched.
  // @ts-expect-error gate() does not exist on Dispatching
  await dispatching.gate();
  // @ts-expect-error gate() does not exist on Reasoning
  await reasoning.gate();
  // @ts-expect-error act() does not exist on Observing (no double dispatch)
  await observing.act();

  // A phase cannot stand in for another: the phases are distinct types.
  // @ts-expect-error a PolicyCheck is not a Dispatching
  const asDispatching: Dispatching = checking;
  // @ts-expect-error a Reasoning is not a PolicyCheck
  const asChecking: PolicyCheck = reasoning;
  // @ts-expect-error an Observing is not a Reasoning
  const asReasoning: Reasoning = observing;
  void asDispatching;
  void asChecking;
  void asReasoning;

  // Dispatching (which holds the Gate's tickets) cannot be constructed outside the loop.
  // @ts-expect-error the mint token is module-private
  new Dispatching(Symbol("forged"), {} as never);
  // @ts-expect-error nor can an Observing be fabricated to skip act()
  new Observing(Symbol("forged"), {} as never);

  // observe() may end the run: its result must be narrowed before reasoning again.
  const next = await observing.observe();
  // @ts-expect-error a LoopResult has no reason()
  await next.reason();
}
