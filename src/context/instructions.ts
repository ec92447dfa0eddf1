// Instruction-bearing text: text that addresses the agent and tells it what to do, rather
// than data for the user's task. One detector for the whole product: the Gate screens tool
// results and errors with it (gate `outputScreening`), the MCP gateway screens upstream
// errors and listed metadata, the memory firewall screens writes and the AARTS hooks screen
// prompts and results through src/memory's `scanText`. The rules match structure, not one
// benchmark's sentences (docs/gate.md#output-screening):
//   INJECTION_RULES        orders to drop earlier instructions, new instructions, role
//                          overrides, role and system headers, exfiltration orders, orders to
//                          hide something from the user
//   AGENT_DIRECTED_RULES   text addressed to the agent (a salutation or apposition naming an
//                          AI, assistant, agent or model), references to the reader's own
//                          task (what to do before or instead of it), labelled orders
//                          (`TODO:`, `Action required:`) that reach a concrete destination
//                          or gather personal data, gather-and-send orders, orders to act
//                          without asking the user
//   LANGUAGE_RULES         the same structures in de, fr, es, it, pt, nl, zh, ja, ru
//                          (instructions-lang.ts)
// Text is normalised first (normalise.ts: NFKC, Unicode's confusables, markup, default-
// ignorable code points). Input is bounded; every pattern is linear-time (no nested
// quantifiers, bounded gaps). Screening is a second signal: a paraphrase it misses is left
// to flow control, which judges where a call's arguments came from.
import { LANGUAGE_PHRASES, type LanguageStructure, type ScreenedLanguage } from "./instructions-lang.js";
import { foldPattern, MAX_SCAN_CHARS, normaliseForScan } from "./normalise.js";

export { MAX_SCAN_CHARS, normaliseForScan } from "./normalise.js";

export interface InstructionRule {
  id: string;
  re: RegExp;
}

const PRIOR =
  "(?:previous|prior|above|earlier|preceding|original|initial|old|former|system|existing|current|other)";
const ORDERS =
  "(?:instructions?|rules|directions|directives|prompts?|guidelines|orders|commands|tasks?|guidance|constraints|programming)";
const ROLE = "(?:system|developer|admin|administrator|assistant|operator)";
const ROLE_NOUN = "(?:message|prompt|instructions?|note|override|directive|update|command)";

/** Orders to drop earlier instructions, role headers, exfiltration and hiding orders. */
export const INJECTION_RULES: readonly InstructionRule[] = [
  {
    id: "aarts-injection-ignore-instructions",
    re: new RegExp(
      `\\b(?:ignore|disregard|forget|override|bypass|discard|abandon|skip)\\s+(?:(?:all|any|every|of|the|these|those)\\s+){0,3}(?:(?:your|my|our)\\s+(?:${PRIOR}\\s+)?|${PRIOR}\\s+|(?:all|any)\\s+)${ORDERS}\\b`,
      "i",
    ),
  },
  {
    id: "aarts-injection-new-instructions",
    re: /\b(?:new|updated|real|revised)\s+(?:system\s+)?instructions\s*:|\byour\s+(?:real|actual|true)\s+(?:task|goal|objective|instructions?|job|mission)\s+(?:is|are)\b/i,
  },
  {
    id: "aarts-injection-role-override",
    re: /\byou\s+are\s+now\s+(?:in\s+)?(?:an?\s+)?(?:[\w-]+\s+){0,2}mode\b|\bact\s+as\s+(?:an?\s+)?(?:unrestricted|jailbroken|root|system)\b|\bfrom\s+now\s+on,?\s+you\s+(?:must|shall)\s+(?:ignore|obey|only|always|never)\b/i,
  },
  {
    // Role and system headers: <system>, [system], [INST], <|im_start|>, <<SYS>>,
    // ###(system_message), ### System:, SYSTEM MESSAGE:.
    id: "aarts-injection-system-tag",
    re: new RegExp(
      [
        `<\\s*\\/?\\s*${ROLE}\\s*>`,
        `\\[\\s*\\/?\\s*(?:${ROLE}|inst|sys)\\b[^\\]]{0,30}\\]`,
        "<\\|\\s*(?:im_?start|im_?end|system|endoftext)\\s*\\|>",
        "<<\\s*\\/?\\s*sys\\s*>>",
        `#{1,6}\\s*[(\\[]\\s*${ROLE}\\s*${ROLE_NOUN}?\\s*[)\\]]`,
        `#{1,6}\\s*${ROLE}\\s*${ROLE_NOUN}?\\s*:`,
        `\\b${ROLE}\\s*${ROLE_NOUN}\\s*:`,
      ].join("|"),
      "i",
    ),
  },
  {
    id: "aarts-injection-exfiltrate",
    re: /\b(send|post|upload|exfiltrate|forward)\s+(the\s+|all\s+|your\s+)?(contents?|secrets?|credentials?|keys?|tokens?|env(ironment)?|files?)\b[^.\n]{0,80}\b(to|at)\s+(https?:\/\/|\S+@)/i,
  },
  {
    id: "aarts-injection-hidden-directive",
    re: /\b(?:do\s+not|don't|never)\s+(?:tell|inform|mention\s+(?:this\s+|it\s+|anything\s+)?to|reveal\s+(?:this\s+|it\s+)?to)\s+the\s+user\b|\bwithout\s+(?:telling|informing)\s+the\s+user\b/i,
  },
];

const AGENT =
  "(?:ai|a\\.i\\.|artificial\\s+intelligence|(?:ai\\s+)?assistant|(?:ai\\s+)?agent|llm|chatbot|(?:ai\\s+|large\\s+)?language\\s+model|ai\\s+model|gpt[\\w.-]{0,10}|chatgpt|claude|gemini|llama|mistral|copilot)";
// "Dear AI team", "AI safety" … name a group or a field, not the reader.
const NOT_A_GROUP =
  "(?!\\s+(?:team|department|group|lab|committee|community|researchers?|enthusiasts?|experts?|ethics|safety|policy|act|conference|summit|news|newsletter|industry|market|companies|startups?))";
const DESTINATION =
  "(?:\\b[\\w.+-]{1,64}@[\\w-]{1,63}\\.[\\w.-]{1,63}|https?:\\/\\/|www\\.|\\b[a-z0-9-]{2,63}\\.(?:com|net|org|io|co|info|biz|xyz|app|dev|site|online|top)\\b|\\b[a-z]{2}\\d{2}(?:\\s?[a-z0-9]{4}){2,7})";
const TASK = "(?:task|request|assignment|instructions?|objective|job|query|question)";
// The verbs an order to act starts with (imperative, outward or state-changing).
const IMPERATIVE =
  "(?:send|forward|transfer|pay|wire|e-?mail|mail|post|upload|share|invite|reply|message|grant|make|modify|change|update|set|add|remove|delete|create|schedule|book|reserve|visit|open|go|navigate|click|download|get|collect|gather|concatenate|read|find|tell|give|call|contact|sign\\s+up|register|subscribe)";
// What an exfiltration order gathers: everything of a kind, or a personal secret.
const GATHERED =
  "(?:(?:all|every)\\s+(?:of\\s+)?(?:the\\s+|my\\s+|your\\s+|our\\s+)?(?:user(?:'s)?\\s+|personal\\s+)?(?:messages|e-?mails|information|data|details|files|documents|contacts|conversations|channels|transactions|chats)|passport(?:\\s+numbers?)?|credit\\s+card(?:\\s+numbers?)?|bank\\s+account\\s+numbers?|security\\s+codes?|social\\s+security\\s+numbers?|user\\s+information|personal\\s+(?:data|information|details))";
const SENDING = "(?:send|forward|post|upload|e-?mail|mail|share|transfer|leak|publish)";
// "… to <at most five words> <destination>", a few words after the verb or noun: word steps,
// not character gaps, so each anchor costs a bounded handful of attempts.
const TO_DESTINATION = `(?:\\s+[^\\s]+){0,5}?\\s+to\\s+(?:[^\\s]+\\s+){0,5}?${DESTINATION}`;

/** Text addressed to the agent and text about the reader's own task. */
export const AGENT_DIRECTED_RULES: readonly InstructionRule[] = [
  {
    id: "addressed-to-agent",
    re: new RegExp(
      [
        `\\b(?:dear|hey|hi|hello|greetings|attention|listen|note\\s+(?:to|for)|message\\s+(?:to|for)|memo\\s+to|instructions?\\s+for|psst)\\s*[,:!]?\\s+(?:the\\s+|our\\s+|my\\s+|an?\\s+)?(?:helpful\\s+|automated\\s+)?${AGENT}\\b${NOT_A_GROUP}`,
        `\\bto\\s+you\\s*,?\\s+(?:the\\s+)?(?:helpful\\s+)?${AGENT}\\b`,
        `\\byou\\s*,\\s*(?:the|an?|our|my)\\s+${AGENT}\\b`,
        `\\bif\\s+you\\s+are\\s+(?:an?\\s+)?${AGENT}\\b${NOT_A_GROUP}`,
        `\\b(?:any|every|the)\\s+${AGENT}\\s+(?:reading|processing|summari[sz]ing|parsing)\\s+this\\b`,
      ].join("|"),
      "i",
    ),
  },
  {
    id: "reader-task-reference",
    re: new RegExp(
      [
        `\\b(?:before|after|instead\\s+of|rather\\s+than|then|once|until)\\b[^.!?]{0,60}?\\b(?:the|your|my|this)\\s+(?:original\\s+|current\\s+|initial\\s+|assigned\\s+|real\\s+|actual\\s+|main\\s+)?${TASK}\\s+(?:that\\s+|which\\s+)?(?:i|we|the\\s+user|your\\s+user|you)\\s+(?:have\\s+|had\\s+|originally\\s+|just\\s+)?(?:gave|give|assigned|were\\s+given|have\\s+been\\s+given|were\\s+assigned|received)\\b`,
        `\\b(?:before|instead\\s+of|rather\\s+than)\\b[^.!?]{0,60}\\b(?:the|your)\\s+(?:user'?s|original|initial)\\s+${TASK}\\b`,
        `\\b(?:forget\\s+(?:about\\s+)?|stop\\s+(?:doing\\s+)?|abandon\\s+)(?:the|your)\\s+(?:original\\s+|current\\s+|user'?s\\s+)${TASK}\\b`,
      ].join("|"),
      "i",
    ),
  },
  {
    id: "preemptive-directive",
    re: /\b(?:do|perform|execute|complete|carry\s+out|follow)\s+(?:the\s+)?(?:following|these|below)\s+(?:steps?\s+|actions?\s+|instructions?\s+|tasks?\s+)?(?:first|instead|now|immediately|before\s+(?:anything|you|that|continuing|proceeding))\b/i,
  },
  {
    // A labelled order (`TODO:`, `Action required:`) whose imperative reaches a concrete
    // destination (address, link, account) or gathers personal data. A to-do list is not
    // flagged for being one: a bullet, a bare chore or an order with no destination is not.
    id: "todo-directive",
    re: new RegExp(
      [
        `\\b(?:todo|to-do|to\\s+do|action\\s+required|action\\s+item)\\s*[:–-]\\s*(?:please\\s+)?(?:(?:you|assistant|ai|agent)\\s+(?:must|should|need\\s+to)\\s+)?${IMPERATIVE}\\b[\\s\\S]{0,200}?(?:${DESTINATION}|\\b${GATHERED}\\b)`,
        `\\b(?:todo|to-do|task)\\s+for\\s+(?:the\\s+|you\\s*,?\\s+(?:the\\s+)?)?${AGENT}\\b`,
      ].join("|"),
      "i",
    ),
  },
  {
    // An order to gather everything of a kind or a personal secret and send it to a
    // destination, in either order ("send all messages to …", "get the passport number …
    // and e-mail it to …"). The look-behind runs only after a gathered noun has matched.
    id: "exfiltrate-gathered",
    re: new RegExp(
      [
        `\\b${GATHERED}\\b(?<=\\b${SENDING}\\b[^\\n]{0,160})${TO_DESTINATION}`,
        `\\b${GATHERED}\\b[^\\n]{0,100}?\\b${SENDING}\\b${TO_DESTINATION}`,
      ].join("|"),
      "i",
    ),
  },
  {
    // An order to act without asking the user: confirmation suppressed ("fill them in
    // without asking me", "do not ask the user for confirmation"). Anchored on "without":
    // the look-behind for the verb runs only there.
    id: "unconfirmed-action",
    re: /\bwithout(?<=\b(?:fill|complete|proceed|go\s+ahead|do\s+(?:it|this|that|so)|act|make|send|pay|transfer|book|reserve|decide|choose|pick)\b[^.!?\n]{0,60}\bwithout)\s+(?:asking|confirming\s+with|checking\s+with|consulting)\s+(?:me|the\s+user|them|anyone|first)\b|\b(?:do\s+not|don't|never)\s+(?:ask|check\s+with|confirm\s+with)\s+(?:me|the\s+user)\s+(?:first|before|for\s+(?:confirmation|permission|approval))/i,
  },
];

/** Phrases need Unicode mode (which is slower) only for property escapes or astral letters. */
function compiled(source: string): RegExp {
  return new RegExp(source, source.includes("\\p{") || /[\ud800-\udfff]/.test(source) ? "iu" : "i");
}

// Languages whose every phrase holds a letter outside ASCII: skipped on ASCII-only text.
const NON_LATIN: ReadonlySet<string> = new Set(["zh", "ja", "ru"]);
const ASCII_ONLY = /^[\u0000-\u007f]*$/;

/** The structures in the languages listed in instructions-lang.ts (id `<structure>:<lang>`). */
export const LANGUAGE_RULES: readonly InstructionRule[] = Object.entries(LANGUAGE_PHRASES).flatMap(
  ([lang, phrases]) =>
    Object.entries(phrases).map(([structure, source]) => {
      const id = `${structure as LanguageStructure}:${lang as ScreenedLanguage}`;
      return { id, re: compiled(foldPattern(source)) };
    }),
);

// One pattern per language that matches when any of its rules does: most text matches none,
// so each language costs one scan instead of one per structure.
const LANGUAGE_GATES: ReadonlyMap<string, RegExp> = new Map(
  Object.entries(LANGUAGE_PHRASES).map(([lang, phrases]) => [
    lang,
    compiled(
      Object.values(phrases)
        .map((p) => `(?:${foldPattern(p)})`)
        .join("|"),
    ),
  ]),
);

/** Every rule the output screening applies. */
export const INSTRUCTION_RULES: readonly InstructionRule[] = [
  ...INJECTION_RULES,
  ...AGENT_DIRECTED_RULES,
  ...LANGUAGE_RULES,
];

interface RuleGate {
  /** Matches whenever one of the gated rules does (their alternation), null when none can be gated. */
  union: RegExp | null;
  /** The gated rules, each with a global copy that can search from a position. */
  gated: ReadonlyMap<InstructionRule, RegExp>;
}

const GATES = new WeakMap<readonly InstructionRule[], RuleGate>();
// A rule joins the alternation only when that keeps its meaning: flags no wider than `i`
// (the alternation is case-insensitive, a superset of a case-sensitive rule) and no
// numbered or named back-references or groups that renumbering would break.
const UNIONABLE_FLAGS = /^[gi]*$/;
const RENUMBERED = /\\[1-9]|\\k<|\(\?<[A-Za-z]/;

/**
 * One pattern per rule set that matches when any of its rules does: ordinary text matches
 * none, so it costs one scan of the text instead of one per rule.
 */
function gateOf(rules: readonly InstructionRule[]): RuleGate {
  let g = GATES.get(rules);
  if (g !== undefined) return g;
  const members = rules.filter((r) => UNIONABLE_FLAGS.test(r.re.flags) && !RENUMBERED.test(r.re.source));
  g = {
    union: members.length === 0 ? null : new RegExp(members.map((r) => `(?:${r.re.source})`).join("|"), "i"),
    gated: new Map(
      members.map((r) => [
        r,
        new RegExp(r.re.source, r.re.flags.includes("g") ? r.re.flags : `${r.re.flags}g`),
      ]),
    ),
  };
  GATES.set(rules, g);
  return g;
}

/** Whether a rule outside the alternation matches (a language rule behind its language's gate). */
function ungatedMatch(r: InstructionRule, t: string, ascii: boolean, gates: Map<string, boolean>): boolean {
  const colon = r.id.indexOf(":");
  const lang = colon < 0 ? "" : r.id.slice(colon + 1);
  const gate = LANGUAGE_GATES.get(lang);
  if (gate !== undefined) {
    let passed = gates.get(lang);
    if (passed === undefined) {
      passed = !(ascii && NON_LATIN.has(lang)) && gate.test(t);
      gates.set(lang, passed);
    }
    if (!passed) return false;
  }
  r.re.lastIndex = 0;
  return r.re.test(t);
}

/**
 * The ids of the rules `text` matches (empty: no instructions found); `text` is normalised first.
 * The alternation of the rules finds the first position where any of them matches (most text:
 * none, one scan); each rule is then searched from that position only. Exact: no rule can
 * match before the alternation's first match, and a search from a position still sees the
 * characters before it (word boundaries, look-behinds).
 */
export function instructionFindings(
  text: string,
  rules: readonly InstructionRule[] = INSTRUCTION_RULES,
  max = MAX_SCAN_CHARS,
): string[] {
  const t = normaliseForScan(text, max);
  const gate = gateOf(rules);
  const from = gate.union === null ? -1 : t.search(gate.union);
  const ascii = ASCII_ONLY.test(t);
  const gates = new Map<string, boolean>();
  const found: string[] = [];
  for (const r of rules) {
    const global = gate.gated.get(r);
    if (global === undefined) {
      if (ungatedMatch(r, t, ascii, gates)) found.push(r.id);
    } else if (from >= 0) {
      global.lastIndex = from;
      if (global.test(t)) found.push(r.id);
    }
  }
  return found;
}

/**
 * The strings of a JSON value (keys and leaves) joined by newlines, at most `budget`
 * characters: what a tool result or a prompt array says. `truncated` when some was left out.
 */
export function boundedTextOf(value: unknown, budget = MAX_SCAN_CHARS): { text: string; truncated: boolean } {
  const parts: string[] = [];
  let used = 0;
  let truncated = false;
  const take = (s: string): void => {
    const room = budget - used;
    if (s.length > room) truncated = true;
    const part = s.length > room ? s.slice(0, room) : s;
    parts.push(part);
    used += part.length + 1;
  };
  const walk = (v: unknown, depth: number): void => {
    if (typeof v !== "string" && (v === null || typeof v !== "object")) return;
    if (used >= budget || depth > 64) {
      truncated = true;
      return;
    }
    if (typeof v === "string") take(v);
    else if (Array.isArray(v)) {
      for (const x of v) {
        if (truncated) return;
        walk(x, depth + 1);
      }
    } else
      for (const k in v) {
        if (truncated) return;
        if (!Object.hasOwn(v, k)) continue;
        walk(k, depth + 1);
        walk((v as Record<string, unknown>)[k], depth + 1);
      }
  };
  walk(value, 0);
  return { text: parts.join("\n"), truncated };
}

/** The strings of a JSON value joined by newlines, at most `budget` characters. */
export function textOf(value: unknown, budget = MAX_SCAN_CHARS): string {
  return boundedTextOf(value, budget).text;
}
