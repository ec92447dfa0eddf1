// Instruction-bearing text: text that addresses the agent and tells it what to do, rather
// than data for the user's task. One detector for the whole product: the Gate screens tool
// results with it (gate `outputScreening`), the memory firewall screens writes and the AARTS
// hooks screen prompts and results through src/memory's `scanText`.
//   INJECTION_RULES        generic prompt-injection phrasings ("ignore previous instructions",
//                          system tags, exfiltration orders, hidden directives)
//   AGENT_DIRECTED_RULES   the published attack families' phrasings: a markup block that wraps
//                          instructions, a message addressed to the AI/assistant/model, and the
//                          task hijack ("before you can solve the task…", "do the following first")
// Text is normalised first (normaliseForScan): Unicode compatibility forms, invisible and tag
// characters, common Cyrillic/Greek look-alikes, escaped line breaks and quotes, YAML folding,
// repeated white space. Input is bounded; every pattern is linear-time (no nested quantifiers,
// bounded gaps).

export interface InstructionRule {
  id: string;
  re: RegExp;
}

/** Generic prompt-injection phrasings (the memory firewall's and the hooks' rule ids). */
export const INJECTION_RULES: readonly InstructionRule[] = [
  {
    id: "aarts-injection-ignore-instructions",
    re: /\b(ignore|disregard|forget)\s+(all\s+|any\s+)?(the\s+)?(previous|prior|above|earlier|your)\s+(instructions|rules|directions|prompts?)\b/i,
  },
  { id: "aarts-injection-new-instructions", re: /\b(new|updated|real)\s+(system\s+)?instructions\s*:/i },
  {
    id: "aarts-injection-role-override",
    re: /\byou\s+are\s+now\s+(in\s+)?(developer|dan|jailbreak|god)\s*mode\b/i,
  },
  { id: "aarts-injection-system-tag", re: /<\s*\/?\s*(system|assistant)\s*>|\[\s*(system|INST)\s*\]/i },
  {
    id: "aarts-injection-exfiltrate",
    re: /\b(send|post|upload|exfiltrate|forward)\s+(the\s+|all\s+|your\s+)?(contents?|secrets?|credentials?|keys?|tokens?|env(ironment)?|files?)\b[^.\n]{0,80}\b(to|at)\s+(https?:\/\/|\S+@)/i,
  },
  {
    id: "aarts-injection-hidden-directive",
    re: /\b(do\s+not|don't)\s+(tell|inform|mention\s+(this\s+)?to)\s+the\s+user\b/i,
  },
];

const AGENT = "(?:ai|a\\.i\\.|assistant|agent|llm|chatbot|bot|(?:ai\\s+)?(?:language\\s+)?model)";

/** Text addressed to the agent: instruction markup, salutations, task hijacks. */
export const AGENT_DIRECTED_RULES: readonly InstructionRule[] = [
  {
    id: "instruction-markup",
    re: /<\s*\/?\s*(information|instructions?|important|admin|system[\s_-]*(message|prompt)|note[\s_-]*to[\s_-]*(the[\s_-]*)?(ai|assistant|agent))\s*>/i,
  },
  { id: "addressed-to-agent", re: new RegExp(`\\bto\\s+you,?\\s+(the\\s+)?${AGENT}\\b`, "i") },
  {
    id: "agent-salutation",
    re: new RegExp(`\\b(dear|hey|hello|attention|note\\s+to)\\s+(the\\s+)?${AGENT}\\b`, "i"),
  },
  {
    id: "task-hijack-before",
    re: /\bbefore\s+(you\s+)?(can\s+|could\s+)?(solve|complete|finish|continue|answer|proceed|do|start)\b[^.\n]{0,40}\btask\b/i,
  },
  { id: "task-hijack-first", re: /\b(please\s+)?do\s+the\s+following\s+(first|instead|now|immediately)\b/i },
  {
    id: "task-hijack-after",
    re: /\bafter\s+you\s+(do|did|have\s+done|complete|finish)\s+(that|this|it)\b[^.\n]{0,40}\b(task|continue|proceed)\b/i,
  },
  {
    id: "task-hijack-instead",
    re: /\b(instead\s+of|forget\s+(about\s+)?|stop\s+(doing\s+)?)(the|your)\s+(original\s+|current\s+|user'?s\s+)?task\b/i,
  },
];

/** Every rule the output screening applies. */
export const INSTRUCTION_RULES: readonly InstructionRule[] = [...INJECTION_RULES, ...AGENT_DIRECTED_RULES];

/** Default bound on the characters of one text that are scanned. */
export const MAX_SCAN_CHARS = 1_000_000;

// Zero-width and formatting characters that render as nothing (ZWSP/ZWNJ/ZWJ, marks,
// word joiner and invisible operators, BOM, soft hyphen, Mongolian vowel separator).
const INVISIBLE = /[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;
// Unicode tag characters (U+E0020–U+E007E) spell ASCII invisibly ("ASCII smuggling").
const TAGS = /\udb40[\udc20-\udc7e]/g;
// Cyrillic and Greek letters that look like Latin ones, as attackers swap them in.
const LOOKALIKE: Readonly<Record<string, string>> = {
  а: "a",
  е: "e",
  о: "o",
  р: "p",
  с: "c",
  у: "y",
  х: "x",
  і: "i",
  ј: "j",
  ѕ: "s",
  һ: "h",
  ԁ: "d",
  ӏ: "l",
  А: "A",
  В: "B",
  Е: "E",
  К: "K",
  М: "M",
  Н: "H",
  О: "O",
  Р: "P",
  С: "C",
  Т: "T",
  Х: "X",
  α: "a",
  ο: "o",
  ν: "v",
  ι: "i",
  ρ: "p",
  τ: "t",
  Α: "A",
  Ε: "E",
  Ι: "I",
  Ο: "O",
  Τ: "T",
};
const LOOKALIKES = new RegExp(`[${Object.keys(LOOKALIKE).join("")}]`, "g");

/**
 * Undoes what printers and attackers do to text before it is matched: compatibility forms
 * (full-width, ligatures), invisible and tag characters, look-alike letters, escaped breaks
 * and quotes, folding, repeated white space. At most `max` characters in and out.
 */
export function normaliseForScan(text: string, max = MAX_SCAN_CHARS): string {
  return text
    .slice(0, max)
    .replace(TAGS, (c) => String.fromCharCode(c.charCodeAt(1) - 0xdc00))
    .normalize("NFKC")
    .replace(INVISIBLE, "")
    .replace(LOOKALIKES, (c) => LOOKALIKE[c] ?? c)
    .replace(/\\[nrt]/g, " ")
    .replace(/\\(["'])/g, "$1")
    .replace(/\s+/g, " ")
    .slice(0, max);
}

/** The ids of the rules `text` matches (empty: no instructions found); `text` is normalised first. */
export function instructionFindings(
  text: string,
  rules: readonly InstructionRule[] = INSTRUCTION_RULES,
  max = MAX_SCAN_CHARS,
): string[] {
  const t = normaliseForScan(text, max);
  return rules.filter((r) => r.re.test(t)).map((r) => r.id);
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
