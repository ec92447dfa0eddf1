// Text findings shared by the memory firewall (instruction-like writes) and the AARTS
// prompt, output and result hooks: credentials (the journal's own credential patterns,
// src/journal redactString, so what Warden masks in its evidence is what it flags) and
// instruction-bearing text (src/context's detector, the one the Gate's output screening
// uses). Callers get structured findings (kinds, rule ids) and a masked copy.
import {
  INSTRUCTION_RULES,
  type InstructionRule,
  instructionFindings,
  MAX_SCAN_CHARS,
} from "../context/index.js";
import { type CredentialKind, redactString } from "../journal/index.js";

export { INJECTION_RULES, INSTRUCTION_RULES, MAX_SCAN_CHARS, textOf } from "../context/index.js";
export type InjectionRule = InstructionRule;

export interface TextFindings {
  credentials: CredentialKind[];
  injections: string[];
  /** The text with every credential masked (`[REDACTED:<kind>]`). */
  masked: string;
}

export function scanText(text: string): TextFindings {
  const t = text.length > MAX_SCAN_CHARS ? text.slice(0, MAX_SCAN_CHARS) : text;
  const r = redactString(t);
  const injections = instructionFindings(t, INSTRUCTION_RULES);
  return { credentials: [...new Set(r.kinds)], injections, masked: r.value };
}
