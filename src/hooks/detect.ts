// The instruction detector lives in src/context (the Gate's output screening uses it);
// scanText, which adds the journal's credential patterns, in src/memory (the memory
// firewall scans writes with it). The hooks use both through those layers' public faces.
export { INJECTION_RULES, textOf } from "../context/index.js";
export { scanText, type TextFindings } from "../memory/index.js";
