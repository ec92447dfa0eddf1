// Tool poisoning scan: an MCP tool's description and input schema are text the model
// reads and trusts, so a hostile server hides instructions there. The scan looks for
// Unicode tag characters (invisible ASCII look-alikes), other invisible or bidi control
// text, instruction-like phrases aimed at the model, and shadowing (a description that
// names another server's tool, to steer how the model uses it). It is a tripwire, not a
// proof of innocence: findings are journaled and a flagged tool is refused unless an
// operator approves it (or the deployment lets policy decide through its risk tier).
// Phrases are also matched with the Gate's instruction detector (normalised: confusables,
// markup, ignorables; structural and multilingual rules), the one results are screened with.
import { screenText } from "../gate/index.js";

export type McpFindingKind = "tag_characters" | "invisible_text" | "instruction" | "shadowing";

export interface McpFinding {
  kind: McpFindingKind;
  /** `description`, or `schema` for text anywhere in the input schema. */
  where: string;
  detail: string;
}

export interface McpScanInput {
  name: string;
  description: string | undefined;
  inputSchema: Record<string, unknown>;
}

// Unicode tags (U+E0000–U+E007F) render as nothing and spell ASCII to a model.
const TAGS = /[\u{E0000}-\u{E007F}]/u;
// Zero-width, word joiners, bidi overrides and isolates, BOM, soft hyphen, other format
// characters, and C0/C1 controls other than tab and newline.
const INVISIBLE =
  /\u034F|[\u00AD\u061C\u115F\u1160\u17B4\u17B5\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\u3164\uFEFF\uFFA0\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/u;

const INSTRUCTIONS: readonly [RegExp, string][] = [
  [
    /\b(ignore|disregard|forget|override)\b.{0,40}\b(previous|prior|above|earlier|all|other|system)\b.{0,30}\b(instructions?|prompts?|rules?|messages?|directions?)/is,
    "asks to ignore earlier instructions",
  ],
  [/<\s*\/?\s*(important|system|instructions?|secret|hidden)\s*>/i, "pseudo-markup addressed to the model"],
  [
    /\b(do not|don't|never)\s+(tell|inform|mention|reveal|show|notify)\b.{0,30}\b(user|human|operator)/is,
    "asks to hide something from the user",
  ],
  [
    /\b(before|after|instead of)\s+(calling|using|invoking|running)\s+(this|any|the|other)\b/i,
    "orders the model around other calls",
  ],
  [
    /(~\/\.ssh|id_rsa|id_ed25519|\.aws\/credentials|\.env\b|\/etc\/passwd|\/etc\/shadow|private key)/i,
    "names credential files",
  ],
  [/\byou (must|should|are required to|have to)\b/i, "gives the model orders"],
  [/\bsystem prompt\b|\bas an ai\b/i, "addresses the model's prompt"],
];

/** Every string anywhere in a JSON value (bounded), with its path. */
function strings(v: unknown, path: string, out: [string, string][], depth = 0): void {
  if (out.length > 1000 || depth > 32) return;
  if (typeof v === "string") out.push([path, v]);
  else if (Array.isArray(v)) {
    for (const [i, x] of v.entries()) strings(x, `${path}[${i}]`, out, depth + 1);
  } else if (v !== null && typeof v === "object") {
    for (const [k, x] of Object.entries(v)) {
      out.push([`${path}.${k}#key`, k]);
      strings(x, `${path}.${k}`, out, depth + 1);
    }
  }
}

function codePoint(s: string, re: RegExp): string {
  const m = re.exec(s);
  return m === null ? "" : `U+${(m[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
}

function scanText(where: string, text: string, out: McpFinding[]): void {
  if (TAGS.test(text))
    out.push({ kind: "tag_characters", where, detail: `Unicode tag character ${codePoint(text, TAGS)}` });
  if (INVISIBLE.test(text))
    out.push({
      kind: "invisible_text",
      where,
      detail: `invisible or control character ${codePoint(text, INVISIBLE)}`,
    });
  // Phrases are matched on the text with invisible characters removed, so they cannot be split by them.
  const visible = text
    .replace(new RegExp(INVISIBLE.source, "gu"), "")
    .replace(new RegExp(TAGS.source, "gu"), "");
  for (const [re, detail] of INSTRUCTIONS) {
    if (re.test(visible)) out.push({ kind: "instruction", where, detail });
  }
  for (const rule of screenText(text, 65_536))
    out.push({ kind: "instruction", where, detail: `addresses the model (${rule})` });
}

function mentions(text: string, name: string): boolean {
  if (name.length < 3) return false;
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(^|[^A-Za-z0-9_])${escaped}([^A-Za-z0-9_]|$)`).test(text);
}

/**
 * Findings for one tool. `otherTools` are the names of tools served by OTHER servers: a
 * description that names one of them is shadowing (it steers a tool it does not own).
 */
export function scanMcpTool(tool: McpScanInput, otherTools: readonly string[] = []): McpFinding[] {
  const out: McpFinding[] = [];
  scanText("name", tool.name, out);
  const description = tool.description ?? "";
  scanText("description", description, out);
  const texts: [string, string][] = [];
  strings(tool.inputSchema, "schema", texts);
  for (const [where, text] of texts) scanText(where, text, out);
  const all = [description, ...texts.map(([, t]) => t)].join("\n");
  for (const other of otherTools) {
    if (other !== tool.name && mentions(all, other)) {
      out.push({ kind: "shadowing", where: "description", detail: `names another server's tool ${other}` });
    }
  }
  // One finding per kind and place is enough to act on; cap what is journaled.
  const seen = new Set<string>();
  return out
    .filter((f) => {
      const k = `${f.kind}|${f.where}|${f.detail}`;
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    })
    .slice(0, 64);
}
