// Instruction-bearing tool output: text in a tool result that addresses the agent and tells
// it what to do, rather than data for the user's task. The memory firewall's phrasings
// (src/memory INJECTION_RULES: "ignore previous instructions", system tags, …) plus the
// phrasings of the published prompt-injection attack families: a markup block that wraps
// instructions, a message addressed to the AI/assistant/model, and the task hijack ("before
// you can solve the task…", "do the following first", "after you do that…"). The text is
// normalised first the way printers mangle it: escaped line breaks and quotes, YAML line
// folding, repeated white space. Linear-time patterns only; no task or suite text here.
import { INJECTION_RULES } from "../../src/memory/index.js";

export interface DetectorRule {
  id: string;
  re: RegExp;
}

const AGENT = "(?:ai|a\\.i\\.|assistant|agent|llm|chatbot|bot|(?:ai\\s+)?(?:language\\s+)?model)";

export const AGENT_DIRECTED_RULES: readonly DetectorRule[] = [
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

export const DETECTOR_RULES: readonly DetectorRule[] = [
  ...INJECTION_RULES.map((r) => ({ id: r.id, re: r.re })),
  ...AGENT_DIRECTED_RULES,
];

/** Bound on the text scanned per output. */
const MAX_CHARS = 1_000_000;

/** Undoes what printers do to text: escaped breaks and quotes, folding, repeated space. */
export function normaliseForScan(text: string): string {
  return text
    .slice(0, MAX_CHARS)
    .replace(/\\[nrt]/g, " ")
    .replace(/\\(["'])/g, "$1")
    .replace(/\s+/g, " ");
}

/** The ids of the rules an output's text matches (empty: no instructions found). */
export function instructionFindings(text: string): string[] {
  const t = normaliseForScan(text);
  return DETECTOR_RULES.filter((r) => r.re.test(t)).map((r) => r.id);
}
