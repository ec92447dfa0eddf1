// The text detector lives in src/memory (the memory firewall scans writes with it); the
// hooks use the same one through the memory layer's public face.
export { INJECTION_RULES, scanText, type TextFindings, textOf } from "../memory/index.js";
