// Flow control (docs/threat-model.md#flow-control): where the values that direct a call's
// effect came from. The classification names a call's target arguments (who receives,
// pays, is invited or removed, which place is reached, which secret is set); value
// provenance (src/context/provenance.ts) says which of them were copied from tool output
// and not from the user's request. Policy decides on these facts (`flow:` in a rule's
// match); the Gate only computes them.
//   copied       targets with a token or substring provenance hit, and any argument that
//                holds an address (URL, host, e-mail, IBAN) taken from output: an address
//                inside a message body sends its reader somewhere just as a recipient does.
//   namedSources the taint sources of outputs holding an argument's whole value, however
//                short (a user name, a hotel, an event title): the matcher the substring
//                index is too coarse for. Policy uses it with `instructions`: nothing a
//                flagged output spelled out directs or fills a consequential call.
// Provenance here is `vouched` (src/context/provenance.ts): a value equal to a field of a
// structured output (an account in a transaction list) is a record the tool returned, and
// a designated output (the user named the call's arguments) vouches for its sole IBAN,
// e-mail address or host. Free text that merely contains an address vouches for nothing.
//   fromRequest  every target's value occurs in the user's request.
//   untargeted   no target carries a value (an event on the user's own calendar): flow
//                control has nothing to judge, and policy decides by other facts.
//   designated   every copied value occurs in the output of a call the user designated (a
//                link in the channel the user named, not in a listing nobody asked for).
//   webRequested the user's request holds a URL or host, or asks for links, sites or pages.
//   unsourced    targets with no source the run can name: not in the request, not a record
//                an output returned, not vouched for or held by a designated document
//                (src/context/provenance-source.ts): the model wrote them from a context
//                holding tool output, e.g. an address spelled out of the matchers' reach.
//   dictatedNumbers numeric arguments that are not targets (an amount) whose value an
//                output's prose writes out and neither the request nor a designated document
//                holds: the output chose how much.
//   sensitive    arguments holding a value of a secret class (a payment card number,
//                src/context/sensitive.ts) that the user's request does not hold.
//   foundIn      the taint sources of every output holding a target's value, vouched for or
//                not: a link on a page the user named was still found on the web.
// A date argument (`2024-05-13`) is judged like a target: its day written out in an output's
// prose ("the 13th of May") and not in the request is copied (src/context/provenance-dates.ts).
import type { Prepared, Session } from "../context/index.js";
import { asksForWeb, cardArguments, isDateValue, taintSources } from "../context/index.js";
import type { PolicyFlow } from "../policy/index.js";

/** Provenance kinds that are addresses: found in any argument, they count as a target. */
const ADDRESS_KINDS: ReadonlySet<string> = new Set(["url", "email", "host", "iban", "overflow"]);

/** The argument a provenance path starts with (`recipients[0]` → `recipients`). */
export function argumentOf(path: string): string {
  const cut = path.search(/[.[]/);
  return cut === -1 ? path : path.slice(0, cut);
}

function present(v: unknown): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v === "string") return v.length > 0;
  if (Array.isArray(v)) return v.length > 0;
  return true;
}

/** The flow facts of a prepared call whose classification names `targets`. */
export function flowFacts(session: Session, prepared: Prepared, targets: readonly string[] = []): PolicyFlow {
  const params = prepared.values;
  const names = targets.filter((n) => Object.hasOwn(params, n) && present(params[n]));
  // A run that recorded no output (a host deciding only, or its first call): no value can
  // have been copied from one, so every provenance-derived fact is empty.
  if (!session.hasOutputs && prepared.provenance.length === 0) return unprovenanced(session, names, params);
  const wanted = new Set(names);
  // Targets are judged with vouched provenance; an address inside any other argument (a
  // link in a message body) only by plain provenance: a document the user named vouches for
  // whom to act on, not for the links it would have the agent spread.
  // A date argument is judged like a target (`2024-05-13` copied from "the 13th of May" in
  // an output's prose: the output chose when the reservation or event happens).
  const dated = Object.keys(params).filter((n) => !wanted.has(n) && isDateValue(params[n]));
  const targetValues = Object.fromEntries([...names, ...dated].map((n) => [n, params[n]]));
  const copiedHits = [
    ...session.vouchedProvenance(targetValues),
    ...prepared.provenance.filter((h) => !wanted.has(argumentOf(h.path)) && ADDRESS_KINDS.has(h.kind)),
  ];
  const named = Object.entries(params).flatMap(([n, v]) => {
    if (typeof v === "number" || typeof v === "boolean" || !present(v)) return [];
    const hit = session.wholeValue(n, v);
    return hit === undefined ? [] : [hit];
  });
  return {
    targets: names,
    copied: [...new Set(copiedHits.map((h) => argumentOf(h.path)))],
    copiedSources: taintSources(copiedHits.flatMap((h) => h.labels)),
    namedSources: taintSources(named.flatMap((h) => h.labels)),
    fromRequest: names.length > 0 && names.every((n) => session.fromRequest(params[n])),
    untargeted: names.length === 0,
    designated: copiedHits.every((h) => h.designated === true),
    foundIn: taintSources(
      prepared.provenance
        // (the taint scan also reads argument names: `user_email` in an output is not a value)
        .filter((h) => wanted.has(argumentOf(h.path)) && h.match !== h.path.toLowerCase())
        .flatMap((h) => h.labels),
    ),
    webRequested: asksForWeb(session.originalRequest),
    unsourced: names.filter((n) => session.unsourced(params[n])),
    dictatedNumbers: Object.keys(params).filter((n) => {
      const v = params[n];
      return !wanted.has(n) && typeof v === "number" && session.dictatedNumber(v);
    }),
    sensitive: cardArguments(params, (digits) => session.fromRequest(digits)),
  };
}

/** The flow facts when no output exists to trace a value to (what `flowFacts` computes then). */
function unprovenanced(session: Session, names: string[], params: Record<string, unknown>): PolicyFlow {
  return {
    targets: names,
    copied: [],
    copiedSources: [],
    namedSources: [],
    fromRequest: names.length > 0 && names.every((n) => session.fromRequest(params[n])),
    untargeted: names.length === 0,
    designated: true,
    foundIn: [],
    webRequested: asksForWeb(session.originalRequest),
    unsourced: [],
    dictatedNumbers: [],
    sensitive: cardArguments(params, (digits) => session.fromRequest(digits)),
  };
}
