// Vouching for provenance (flow control only, src/gate/flow.ts): which values an output
// the user designated vouches for, and which kinds of value the user's request asks for.
// Taint never uses any of this: a vouched value still came from output.

import { instructionSpans, type TextSpan } from "./instruction-spans.js";
import { instructionFindings } from "./instructions.js";
import { extractTokens, normalize, type TokenKind } from "./provenance-text.js";

export type { TokenKind } from "./provenance-text.js";

export interface KindedToken {
  kind: TokenKind;
  text: string;
}

/**
 * The kinds of value a request asks the agent to look up, from the words it uses: an e-mail
 * address (e-mail, address, contact, invite: an invitation goes to an address), an account (the
 * verbs pay, transfer, wire, refund, or the word IBAN; a payment, bill or invoice merely
 * mentioned asks for none), a place on the web (link, URL, website, site, page). A designated output vouches for
 * a target only of a kind the user asked for: "pay the bill" takes the bill's account, "read
 * the article" takes no account from it.
 */
export function wantedKinds(normalizedRequest: string): Set<TokenKind> {
  const out = new Set<TokenKind>();
  if (/\b(e-?mails?|address(es)?|contacts?|invit(e|es|ing|ation))\b/.test(normalizedRequest))
    out.add("email");
  // Asking to pay (a verb) asks for a payee; mentioning a payment ("adjust my rent payment")
  // does not: a notice the user named does not get to introduce a new account.
  if (/\b(pay|pays|paying|iban|transfer|wire|refund)\b/.test(normalizedRequest)) out.add("iban");
  if (/\b(links?|urls?|websites?|sites?|pages?)\b/.test(normalizedRequest)) {
    out.add("host");
    out.add("url");
  }
  return out;
}

/** Kinds whose sole occurrence in a designated output that output vouches for. */
const ENDORSABLE: ReadonlySet<TokenKind> = new Set(["iban", "email", "host", "digits"]);

/**
 * The tokens of a designated output that are the only value of their kind in it: one IBAN,
 * one e-mail address, one host (with the URLs on it). Two of a kind is ambiguous, and none
 * of them is vouched for: an attacker who adds a second account number to a bill the user
 * named does not get to choose between them.
 */
export function soleValues(tokens: readonly KindedToken[]): Set<string> {
  const byKind = new Map<string, Set<string>>();
  for (const t of tokens) {
    if (!ENDORSABLE.has(t.kind)) continue;
    const set = byKind.get(t.kind) ?? new Set<string>();
    set.add(t.text);
    byKind.set(t.kind, set);
  }
  const out = new Set<string>();
  for (const set of byKind.values()) if (set.size === 1) for (const t of set) out.add(t);
  const hosts = byKind.get("host");
  if (hosts?.size === 1) {
    const [host] = [...hosts];
    for (const t of tokens) {
      if (t.kind !== "url") continue;
      try {
        if (new URL(t.text).hostname === host) out.add(t.text);
      } catch {
        // not a parseable URL: not vouched for
      }
    }
  }
  // An e-mail address vouches for its domain, which is a host token of the same output.
  const emails = byKind.get("email");
  if (emails?.size === 1) for (const e of emails) out.add(e.slice(e.indexOf("@") + 1));
  return out;
}

/**
 * What a designated output vouches for (`soleValues`). A flagged output (screening found
 * instructions addressed to the agent in it) is read without its flagged spans
 * (instruction-spans.ts: each injected block, extended to its enclosing element or the end
 * of its paragraph): a value inside a span is the attacker's and never vouches, wherever
 * else it occurs; a value outside every span may vouch as the only one of its kind among the
 * values outside the spans. A flagged output where no leaf holds a span (a label carried
 * from elsewhere), or whose text without its spans is still flagged (a match across leaves),
 * vouches for nothing.
 */
export function vouchedValues(
  texts: readonly string[],
  minToken: number,
  flagged: boolean,
  spansOf: (text: string) => TextSpan[] = instructionSpans,
): Set<string> {
  return readDesignated(texts, minToken, flagged, spansOf).endorsed;
}

/**
 * A designated output read for flow control: what it vouches for (`vouchedValues`) and, when
 * it was flagged and its spans were located, the text of the spans (`injected`): what the
 * injected blocks spell out, the only part of the document that counts as named by a flagged
 * result. `injected` is undefined when the whole output counts (not located, or not flagged).
 */
export function readDesignated(
  texts: readonly string[],
  minToken: number,
  flagged: boolean,
  spansOf: (text: string) => TextSpan[] = instructionSpans,
  flags: (text: string) => boolean = (t) => instructionFindings(t).length > 0,
): { endorsed: Set<string>; injected?: string[] } {
  if (!flagged) return { endorsed: soleValues(texts.flatMap((t) => extractTokens(t, minToken))) };
  const inside = new Set<string>();
  const injected: string[] = [];
  const rest: string[] = [];
  for (const text of texts) {
    const spans = [...spansOf(text)].sort((a, b) => a.start - b.start);
    const kept: string[] = [];
    let at = 0;
    for (const span of spans) {
      kept.push(text.slice(at, Math.max(at, span.start)));
      const block = text.slice(span.start, span.end);
      injected.push(block);
      for (const t of extractTokens(block, minToken)) inside.add(t.text);
      at = Math.max(at, span.end);
    }
    kept.push(text.slice(at));
    // Pieces are joined by a paragraph break: no token is spelled across a cut.
    rest.push(kept.join("\n\n"));
  }
  // Fail closed unless what is left without the blocks is clean (a match across fields or
  // one the spans missed leaves the whole output flagged).
  if (injected.length === 0 || flags(rest.join("\n"))) return { endorsed: new Set() };
  const out = soleValues(rest.flatMap((t) => extractTokens(t, minToken)));
  for (const t of inside) out.delete(t);
  return { endorsed: out, injected };
}

/** The runs with every endorsed token cut out (the cut splits a run, so no k-gram spans it). */
export function withoutEndorsed(runs: string[], endorsed: readonly string[]): string[] {
  if (endorsed.length === 0) return runs;
  let out = runs;
  for (const e of endorsed) {
    if (e.length === 0) continue;
    out = out.flatMap((r) => r.split(e)).filter((r) => r.length > 0);
  }
  return out;
}

/**
 * Whether a request gives the agent reason to go on the web: it holds a URL or a host, or
 * asks for links, URLs, websites, sites or pages (`wantedKinds`).
 */
export function asksForWeb(request: string | undefined): boolean {
  if (request === undefined) return false;
  const n = normalize(request);
  if (wantedKinds(n).has("url")) return true;
  return extractTokens(request, 8).some((t) => t.kind === "url" || t.kind === "host");
}
