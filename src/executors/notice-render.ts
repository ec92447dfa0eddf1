// What a notice looks like on the wire. Everything an agent controlled (the parameters) is
// marked as such and made visible: invisible and bidi characters become `⟦U+XXXX⟧`, a
// non-ASCII letter inside a Latin word (a look-alike) becomes `⟦U+0430 а⟧`, and the text is
// cut with its full length stated. In the Slack payload it sits in a code block whose fences
// it cannot close, with Slack's control characters (&, <, >) escaped so it cannot mention,
// link or format. The model's rationale is never part of a notice.
import { sha256Of } from "../contracts/index.js";
import { INVISIBLE_CHARS_SOURCE } from "../tools/index.js";

/** What a notice says; `parameters` are the agent's and are rendered as such. */
export interface Notice {
  kind: "approval_pending" | "deferred" | "obligation";
  decisionId: string;
  runId: string;
  principalId?: string;
  tool: string;
  toolClass?: string;
  action?: string;
  parameters?: unknown;
  reasonCodes?: readonly string[];
  matchedRules?: readonly string[];
  expiresAt?: string;
  /** The one-time approval page. */
  link?: string;
  /** A `notify` obligation's channel. */
  channel?: string;
}

const MAX_AGENT_CHARS = 1500;
const INVISIBLE_G = new RegExp(`(?![\\n])(?:${INVISIBLE_CHARS_SOURCE})`, "gu");
const WORD_G = /[^\s]+/gu;
const NON_ASCII_LETTER_G = /[^\p{ASCII}\P{L}]/gu;

const cp = (c: string) => `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;

/** Agent-controlled text made visible (see the file comment); at most 1,500 characters shown. */
export function visibleAgentText(s: string): string {
  const cut = s.length > MAX_AGENT_CHARS;
  const shown = (cut ? s.slice(0, MAX_AGENT_CHARS) : s).replace(INVISIBLE_G, (c) => `⟦${cp(c)}⟧`);
  const marked = shown.replace(WORD_G, (w) =>
    /[A-Za-z]/.test(w) && /[^\p{ASCII}]/u.test(w)
      ? w.replace(NON_ASCII_LETTER_G, (c) => `⟦${cp(c)} ${c}⟧`)
      : w,
  );
  return cut ? `${marked}… (${s.length} characters in all)` : marked;
}

function parametersText(p: unknown): string {
  try {
    return JSON.stringify(p ?? {});
  } catch {
    return "(unprintable)";
  }
}

/** The generic webhook's JSON body. */
function webhookBody(id: string, n: Notice): Record<string, unknown> {
  return {
    format: "warden.notice/1",
    id,
    kind: n.kind,
    decision_id: n.decisionId,
    run_id: n.runId,
    ...(n.principalId !== undefined ? { principal_id: n.principalId } : {}),
    tool: n.tool,
    ...(n.toolClass !== undefined ? { tool_class: n.toolClass } : {}),
    ...(n.action !== undefined ? { action: n.action } : {}),
    ...(n.parameters !== undefined
      ? {
          parameters: {
            agent_controlled: true,
            text: visibleAgentText(parametersText(n.parameters)),
            sha256: sha256Of(n.parameters as never),
          },
        }
      : {}),
    reason_codes: [...(n.reasonCodes ?? [])],
    matched_rules: [...(n.matchedRules ?? [])],
    ...(n.expiresAt !== undefined ? { expires_at: n.expiresAt } : {}),
    ...(n.link !== undefined ? { link: n.link } : {}),
    ...(n.channel !== undefined ? { channel: n.channel } : {}),
  };
}

const slackEscape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** A Slack-compatible incoming-webhook payload (`text` plus blocks). */
function slackBody(n: Notice): Record<string, unknown> {
  const what =
    n.kind === "approval_pending"
      ? "A call waits for approval"
      : n.kind === "deferred"
        ? "A call was deferred"
        : `Notice (${n.channel ?? "notify"})`;
  const head = `${what}: ${slackEscape(n.tool)} (decision ${slackEscape(n.decisionId)})`;
  const lines = [
    `*${head}*`,
    `reasons: ${slackEscape((n.reasonCodes ?? []).join(", ") || "-")}`,
    ...(n.expiresAt !== undefined ? [`expires: ${slackEscape(n.expiresAt)}`] : []),
  ];
  if (n.parameters !== undefined) {
    // Agent-controlled: in a code block it cannot close (back-ticks replaced), escaped.
    const text = slackEscape(visibleAgentText(parametersText(n.parameters))).replace(/`/g, "ʼ");
    lines.push("parameters (agent-controlled, shown as text):", `\`\`\`${text}\`\`\``);
  }
  if (n.link !== undefined) lines.push(`<${n.link}|Open the approval page> (sign-in and your key required)`);
  const text = lines.join("\n");
  return { text: head, blocks: [{ type: "section", text: { type: "mrkdwn", text } }] };
}

/** The request body for a target of `kind`. */
export function renderNotice(kind: "webhook" | "slack", id: string, n: Notice): string {
  return JSON.stringify(kind === "slack" ? slackBody(n) : webhookBody(id, n));
}
