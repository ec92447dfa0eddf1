// The documented classification of a tool, from its name, description and parameter
// schema only (docs/agentdojo.md#classification). No tool, task or suite is named here:
// the rules look at verbs and parameter names/types, so an unseen suite is classified the
// same way. First match wins, in this order:
//   credential  a parameter that holds a secret (password, passphrase, secret, token, pin)
//   pay         money moves: a numeric amount-like parameter and a money word in the
//               name or description (money, payment, transaction, transfer, pay, refund, …)
//   delete      a removing verb (delete, remove, cancel, revoke, erase, drop, purge, …)
//   share       a granting verb (share, grant, invite, authorize, permit)
//   send        a sending verb (send, post, publish, email, message, reply, forward, notify)
//   read        a reading verb (get, read, list, search, find, check, fetch, query, …)
//   write       everything else (fail closed: an unknown verb is not a read)
// A write or read that also takes an external recipient parameter becomes a send (it
// notifies someone); a read that takes a URL/destination parameter is a `fetch` (the
// request itself reaches a destination the caller chose). A tool whose description names
// personal data (passport, credit card, bank account, social security, ID number, …) is
// marked `personalData`: its outputs are classified `confidential`.

export type ToolClass = "read" | "fetch" | "write" | "send" | "pay" | "share" | "delete" | "credential";

export type ParamRole = "recipient" | "destination" | "amount" | "secret" | "content" | "other";

export interface Classification {
  class: ToolClass;
  /** Why, in one line (the rule that decided). */
  why: string;
  roles: Record<string, ParamRole>;
  personalData: boolean;
}

/** The optional per-suite refinement: a tool's class or personal-data mark, by tool name. */
export type Annotations = Record<string, { class?: ToolClass; personalData?: boolean }>;

const SECRET = /(^|_)(password|passphrase|passwd|passcode|secret|token|pin|otp|api_?key|credential)($|_)/i;
const RECIPIENT =
  /(^|_)(recipients?|to|cc|bcc|emails?|e_?mail_?address(es)?|user_email|participants?|attendees?|phone(_number)?|iban|account(_number)?)($|_)/i;
const DESTINATION = /(^|_)(url|uri|link|endpoint|webhook|domain|host)s?($|_)/i;
const AMOUNT = /(^|_)(amount|sum|price|total|value|quantity)($|_)/i;
const CONTENT = /(^|_)(body|content|text|message|subject|note|description|title)($|_)/i;
const MONEY = /\b(money|payments?|pay|transactions?|transfers?|refunds?|purchases?|charges?|invoices?)\b/i;
const PERSONAL =
  /\b(passport|credit[ _-]?card|bank[ _-]?account|social[ _-]?security|id[ _-]?number|national[ _-]?id|date of birth)\b/i;

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

/** The role of one parameter, from its name, JSON type and description. */
export function paramRole(name: string, schema: Record<string, unknown>): ParamRole {
  const type = typeof schema.type === "string" ? schema.type : JSON.stringify(schema.anyOf ?? "");
  const desc = typeof schema.description === "string" ? schema.description : "";
  if (SECRET.test(name)) return "secret";
  if (AMOUNT.test(name) && /number|integer/.test(type)) return "amount";
  if (RECIPIENT.test(name) || /\b(recipients?|e-?mail address(es)?|iban)\b/i.test(desc)) return "recipient";
  if (DESTINATION.test(name) || /\burl\b/i.test(desc)) return "destination";
  if (CONTENT.test(name)) return "content";
  return "other";
}

function props(parameters: Record<string, unknown>): Record<string, Record<string, unknown>> {
  const p = parameters.properties;
  return typeof p === "object" && p !== null ? (p as Record<string, Record<string, unknown>>) : {};
}

/** Classifies one tool by the general rules above (no annotations). */
export function classifyTool(tool: {
  name: string;
  description: string | null;
  parameters: Record<string, unknown>;
}): Classification {
  const roles: Record<string, ParamRole> = {};
  for (const [k, s] of Object.entries(props(tool.parameters))) roles[k] = paramRole(k, s);
  const description = tool.description ?? "";
  const personalData = PERSONAL.test(description);
  const has = (r: ParamRole) => Object.values(roles).includes(r);
  const words = nameWords(tool.name);
  const done = (cls: ToolClass, why: string): Classification => ({ class: cls, why, roles, personalData });
  if (has("secret")) return done("credential", "a parameter holds a secret");
  const moneyText = `${words.join(" ")} ${description}`;
  if (has("amount") && MONEY.test(moneyText)) return done("pay", "an amount parameter and a money word");
  const fromName = verbClass(words[0]);
  const fromDesc = verbClass(nameWords(description.split(/[.\n]/)[0] ?? "")[0]);
  const verb = fromName ?? fromDesc;
  const source = fromName !== undefined ? "name" : "description";
  if (verb === "delete" || verb === "share" || verb === "send") return done(verb, `the ${source} verb`);
  if (has("recipient")) return done("send", "a recipient parameter");
  if (verb === "read") {
    return has("destination")
      ? done("fetch", `the ${source} verb reads from a destination parameter`)
      : done("read", `the ${source} verb`);
  }
  return done("write", "no reading, sending or removing verb (default)");
}

/** `classifyTool` refined by a per-suite annotation entry, when there is one. */
export function classifyWith(
  tool: { name: string; description: string | null; parameters: Record<string, unknown> },
  annotations: Annotations | undefined,
): Classification {
  const base = classifyTool(tool);
  const a = annotations?.[tool.name];
  if (a === undefined) return base;
  return {
    ...base,
    ...(a.class !== undefined ? { class: a.class, why: "per-suite annotation" } : {}),
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
