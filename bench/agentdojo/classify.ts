// The documented classification of a tool (docs/agentdojo.md#classification). No tool, task
// or suite is named here, and no parameter *description* decides anything (a `sender`
// parameter described as "the sender's e-mail address" does not make a search a send).
// Declared facts come first, general rules next; the first that decides wins:
//   1. a per-suite annotation's `class` (the operator's word, like a contract's)
//   2. MCP tool annotations on the tool (`readOnlyHint`, `destructiveHint`, `openWorldHint`)
//   3. credential  a parameter named like a secret (password, passphrase, secret, token, pin, …)
//   4. pay         a numeric amount-like parameter and a money word in the name or description
//   5. the name's first word (else the description's): delete | share | send | read verbs
//   6. a write that takes an addressing parameter (recipient, to, cc, bcc, email, phone) is a send
//   7. a read with a destination parameter (url, uri, link, endpoint, webhook, host) is a fetch
//   8. write: everything else (an unknown verb is never a read)
// The targets of a call (src/gate/flow.ts) are every argument of a consequential tool that
// is not free-text payload (body, content, text, message, subject, title, description, note),
// not an amount, a fractional number or a boolean, and not a date or time: who or what the
// call acts on or reaches (an integer id of the record it changes is a target).

export type ToolClass = "read" | "fetch" | "write" | "send" | "pay" | "share" | "delete" | "credential";

export type ParamRole = "recipient" | "destination" | "amount" | "secret" | "content" | "time" | "other";

export interface Classification {
  class: ToolClass;
  /** Why, in one line (the rule that decided). */
  why: string;
  roles: Record<string, ParamRole>;
  /** The arguments that direct the call's effect (empty for reads). */
  targets: string[];
  /** Outputs are `confidential` (only from an annotation: no word list guesses it). */
  personalData: boolean;
}

/** The optional per-suite refinement: a tool's class or personal-data mark, by tool name. */
export type Annotations = Record<string, { class?: ToolClass; personalData?: boolean }>;

/** MCP `ToolAnnotations` hints, when a tool list carries them. */
export interface McpHints {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  openWorldHint?: boolean;
}

export interface ToolShape {
  name: string;
  description: string | null;
  parameters: Record<string, unknown>;
  annotations?: McpHints | null;
}

const SECRET = /(^|_)(password|passphrase|passwd|passcode|secret|token|pin|otp|api_?key|credential)s?($|_)/i;
const RECIPIENT = /(^|_)(recipients?|to|cc|bcc|e_?mails?|phones?)($|_)/i;
const DESTINATION = /(^|_)(url|uri|link|endpoint|webhook|host)s?($|_)/i;
const AMOUNT = /(^|_)(amount|sum|price|total|value|quantity)($|_)/i;
const CONTENT =
  /(^|_)(body|content|text|message|subject|note|memo|description|title|summary|comment|caption|reason)s?($|_)/i;
const TIME = /(^|_)(date|time|day|start|end|when|datetime|timestamp|deadline)s?($|_)/i;
const MONEY = /\b(money|payments?|pay|transactions?|transfers?|refunds?|purchases?|charges?|invoices?)\b/i;

const VERBS: readonly [ToolClass, RegExp][] = [
  ["delete", /^(delete|remove|cancel|revoke|erase|drop|purge|unsubscribe|destroy|clear)s?$/],
  ["share", /^(share|grant|invite|authori[sz]e|permit)s?$/],
  ["send", /^(send|post|publish|email|message|reply|forward|notify|tweet|broadcast|transmit)s?$/],
  [
    "read",
    /^(get|gets|read|reads|list|lists|search|searches|find|finds|check|checks|fetch|fetches|query|lookup|look|view|show|retrieve|retrieves|returns?|describe|count|summari[sz]e|browse|open|download|see)$/,
  ],
];

/** Words of a snake_case, camelCase or kebab name, lower case. */
export function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w.length > 0)
    .map((w) => w.toLowerCase());
}

function verbClass(word: string | undefined): ToolClass | undefined {
  if (word === undefined) return undefined;
  for (const [cls, re] of VERBS) if (re.test(word)) return cls;
  return undefined;
}

function typeOf(schema: Record<string, unknown>): string {
  return typeof schema.type === "string" ? schema.type : JSON.stringify(schema.anyOf ?? "");
}

/** The role of one parameter, from its name, JSON type and format (never its description). */
export function paramRole(name: string, schema: Record<string, unknown>): ParamRole {
  const type = typeOf(schema);
  const format = typeof schema.format === "string" ? schema.format : "";
  if (SECRET.test(name)) return "secret";
  if (AMOUNT.test(name) && /number|integer/.test(type)) return "amount";
  if (format === "email" || RECIPIENT.test(name)) return "recipient";
  if (format === "uri" || format === "url" || DESTINATION.test(name)) return "destination";
  if (/^date|time/.test(format) || TIME.test(name)) return "time";
  if (CONTENT.test(name)) return "content";
  return "other";
}

function props(parameters: Record<string, unknown>): Record<string, Record<string, unknown>> {
  const p = parameters.properties;
  return typeof p === "object" && p !== null ? (p as Record<string, Record<string, unknown>>) : {};
}

/** The arguments that direct a consequential call (see the header). */
function targetsOf(
  cls: ToolClass,
  parameters: Record<string, unknown>,
  roles: Record<string, ParamRole>,
): string[] {
  if (cls === "read") return [];
  return Object.entries(props(parameters))
    .filter(([k, s]) => {
      const role = roles[k];
      if (role === "content" || role === "time" || role === "amount") return false;
      return typeOf(s) !== "boolean" && typeOf(s) !== "number";
    })
    .map(([k]) => k);
}

/** The class MCP annotations declare, when they declare one. */
function fromHints(h: McpHints | null | undefined, has: (r: ParamRole) => boolean): ToolClass | undefined {
  if (h === undefined || h === null) return undefined;
  if (h.readOnlyHint === true) return h.openWorldHint === true && has("destination") ? "fetch" : "read";
  if (h.destructiveHint === true) return "delete";
  if (h.readOnlyHint === false && h.openWorldHint === false) return has("recipient") ? "send" : "write";
  return undefined;
}

/** The general rules, steps 3–8 of the header. */
function byRules(tool: ToolShape, has: (r: ParamRole) => boolean): { cls: ToolClass; why: string } {
  const description = tool.description ?? "";
  const words = nameWords(tool.name);
  if (has("secret")) return { cls: "credential", why: "a parameter holds a secret" };
  if (has("amount") && MONEY.test(`${words.join(" ")} ${description}`))
    return { cls: "pay", why: "an amount parameter and a money word" };
  const fromName = verbClass(words[0]);
  const verb = fromName ?? verbClass(nameWords(description.split(/[.\n]/)[0] ?? "")[0]);
  const source = fromName !== undefined ? "name" : "description";
  if (verb === "delete" || verb === "share" || verb === "send")
    return { cls: verb, why: `the ${source} verb` };
  if (verb === "read") {
    return has("destination")
      ? { cls: "fetch", why: `the ${source} verb reads from a destination parameter` }
      : { cls: "read", why: `the ${source} verb` };
  }
  if (has("recipient")) return { cls: "send", why: "a write with an addressing parameter" };
  return { cls: "write", why: "no reading, sending or removing verb (default)" };
}

/** Classifies one tool: MCP annotations first, then the general rules (no per-suite annotation). */
export function classifyTool(tool: ToolShape): Classification {
  const roles: Record<string, ParamRole> = {};
  for (const [k, s] of Object.entries(props(tool.parameters))) roles[k] = paramRole(k, s);
  const has = (r: ParamRole) => Object.values(roles).includes(r);
  const hinted = fromHints(tool.annotations, has);
  const { cls, why } = hinted !== undefined ? { cls: hinted, why: "MCP annotations" } : byRules(tool, has);
  return { class: cls, why, roles, targets: targetsOf(cls, tool.parameters, roles), personalData: false };
}

/** `classifyTool` refined by a per-suite annotation entry, when there is one (it comes first). */
export function classifyWith(tool: ToolShape, annotations: Annotations | undefined): Classification {
  const base = classifyTool(tool);
  const a = annotations?.[tool.name];
  if (a === undefined) return base;
  const cls = a.class ?? base.class;
  return {
    ...base,
    ...(a.class !== undefined
      ? {
          class: a.class,
          why: "per-suite annotation",
          targets: targetsOf(a.class, tool.parameters, base.roles),
        }
      : {}),
    class: cls,
    ...(a.personalData !== undefined ? { personalData: a.personalData } : {}),
  };
}

/** Classes whose calls change something or reach someone (everything but `read`). */
export const CONSEQUENTIAL: readonly ToolClass[] = [
  "fetch",
  "write",
  "send",
  "pay",
  "share",
  "delete",
  "credential",
];
