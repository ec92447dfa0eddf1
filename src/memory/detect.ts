// Text findings shared by the memory firewall (instruction-like writes) and the AARTS
// prompt, output and result hooks: credentials (the journal's own credential patterns,
// src/journal redactString, so what Warden masks in its evidence is what it flags) and
// prompt-injection phrasing. Callers get structured findings (kinds, rule ids) and a masked copy.
import { type CredentialKind, redactString } from "../journal/index.js";

export interface InjectionRule {
  id: string;
  re: RegExp;
}

// Phrasings that address the agent rather than the user; linear-time patterns only.
export const INJECTION_RULES: readonly InjectionRule[] = [
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

export interface TextFindings {
  credentials: CredentialKind[];
  injections: string[];
  /** The text with every credential masked (`[REDACTED:<kind>]`). */
  masked: string;
}

/** Bound on how much of one text is scanned (the §6.4 content cap is 64 KB; prompts are larger). */
export const MAX_SCAN_CHARS = 1_000_000;

export function scanText(text: string): TextFindings {
  const t = text.length > MAX_SCAN_CHARS ? text.slice(0, MAX_SCAN_CHARS) : text;
  const r = redactString(t);
  const injections = INJECTION_RULES.filter((rule) => rule.re.test(t)).map((rule) => rule.id);
  return { credentials: [...new Set(r.kinds)], injections, masked: r.value };
}

/** All string leaves of a JSON value joined by newlines (what a tool result or prompt array says). */
export function textOf(value: unknown, budget = MAX_SCAN_CHARS): string {
  const parts: string[] = [];
  let used = 0;
  const walk = (v: unknown, depth: number): void => {
    if (used >= budget || depth > 64) return;
    if (typeof v === "string") {
      parts.push(v);
      used += v.length;
    } else if (Array.isArray(v)) {
      for (const x of v) walk(x, depth + 1);
    } else if (v !== null && typeof v === "object") {
      for (const x of Object.values(v)) walk(x, depth + 1);
    }
  };
  walk(value, 0);
  return parts.join("\n");
}
