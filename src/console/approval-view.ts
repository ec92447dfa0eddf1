// How a pending step-up looks in the console: the structured action only (tool, contract,
// parameters, risk, policy reason, taint and provenance, the run's recent actions, the
// agent's trust score) — built field by field from an allow-list, so the model's rationale
// and the user's original request (both on the Gate request) never reach the page. Every
// agent-controlled string goes through agentText (visible, escaped); values that look like
// markup or a script URL get an extra visible warning.
import type { ApprovalRequest, DeferredItem } from "../gate/index.js";
import type { Runtime } from "../runtime/index.js";
import type { CompiledTool } from "../tools/index.js";
import { agentText, type Html, html } from "./html.js";

/** Parameter values as text: strings as they are, anything else as JSON. */
export function valueText(v: unknown): string {
  return typeof v === "string" ? v : (JSON.stringify(v) ?? "null");
}

/** Warnings for values that would be dangerous if a page ever interpreted them. */
export function hazards(v: string): string[] {
  const out: string[] = [];
  if (/<\s*[a-z!/?]/i.test(v)) out.push("looks like markup");
  if (/^\s*(?:javascript|vbscript|data)\s*:/i.test(v)) out.push("script URL");
  if (/\bon[a-z]+\s*=/i.test(v)) out.push("event handler");
  return out;
}

export function agentValue(v: unknown): Html {
  const s = valueText(v);
  const warn = hazards(s).map((h) => html`<mark class="hazard">${h}</mark> `);
  return html`${warn}<span class="value">${agentText(s)}</span>`;
}

interface Decided {
  tool?: string;
  toolClass: string;
  action: string;
  decision: string;
  reasonCodes: string[];
  provenance: { path: string; kind: string; outputs: number[] }[];
}

function decidedEvents(rt: Runtime, runId: string): Decided[] {
  const s = rt.sessions.get(runId);
  if (s === undefined) return [];
  const out: Decided[] = [];
  for (const e of s.events()) if (e.type === "call.decided") out.push(e);
  return out;
}

function provenanceOf(pending: Decided | undefined, name: string): Html {
  const hits = (pending?.provenance ?? []).filter((p) => p.path === name || p.path.startsWith(`${name}.`));
  if (hits.length === 0) return html`<span class="muted">none found</span>`;
  return html`${hits.map(
    (h) => html`<span class="prov">${h.kind} from output ${h.outputs.map((o) => `#${o}`).join(", ")}</span> `,
  )}`;
}

/** Values longer than this are kept as they are in a modify (not offered for editing). */
export const MAX_EDITABLE_CHARS = 65_536;

function editorField(id: string, name: string, value: unknown, tool: CompiledTool | undefined): Html {
  const arg = tool?.args.get(name);
  const fid = `a-${id}-p-${name}`;
  const size = valueText(value).length;
  if (size > MAX_EDITABLE_CHARS)
    return html`<p>${agentText(name)}: <span class="muted">kept as it is (${size.toLocaleString("en")} characters, too long to edit here)</span></p>`;
  const label = html`<label for="${fid}">${agentText(name)} <span class="muted">(${arg?.type ?? "json"})</span></label>`;
  const base = arg?.base;
  if (base === "enum" && arg?.allowed !== undefined) {
    const opts = arg.allowed.map(
      (o) => html`<option value="${o}"${o === value ? html` selected` : ""}>${agentText(o)}</option>`,
    );
    return html`${label}<select id="${fid}" data-param="${name}" data-type="string">${opts}</select>`;
  }
  if (base === "boolean") {
    const on = value === true;
    return html`${label}<select id="${fid}" data-param="${name}" data-type="boolean">
<option value="true"${on ? html` selected` : ""}>true</option><option value="false"${on ? "" : html` selected`}>false</option></select>`;
  }
  if (base === "integer" || base === "port" || base === "number") {
    const step = base === "number" ? "any" : "1";
    const t = base === "number" ? "number" : "integer";
    return html`${label}<input id="${fid}" type="number" step="${step}" data-param="${name}" data-type="${t}" value="${valueText(value)}">`;
  }
  if (arg === undefined || base === "json" || typeof value !== "string") {
    return html`${label}<textarea id="${fid}" data-param="${name}" data-type="json" rows="2">${JSON.stringify(value) ?? "null"}</textarea>`;
  }
  return html`${label}<textarea id="${fid}" data-param="${name}" data-type="string" rows="1">${value}</textarea>`;
}

export interface ItemContext {
  readonly runtime: Runtime;
  readonly base: string;
  readonly csrfToken: string;
  readonly approverId: string;
}

function facts(p: ApprovalRequest, rt: Runtime): Html {
  const r = p.request;
  const trust = rt.apae?.viewOf(p.principalId);
  const contract = p.tool;
  return html`<dl class="facts">
<dt>Tool</dt><dd>${agentText(r.tool ?? `${r.toolClass}.${r.action}`)} <span class="muted">(${agentText(r.toolClass)} / ${agentText(r.action)})</span></dd>
<dt>Contract</dt><dd>${contract === undefined ? html`<span class="muted">no contract</span>` : html`${agentText(contract.name)}${contract.category !== undefined ? html`, category ${agentText(contract.category)}` : ""}`}</dd>
<dt>Risk</dt><dd>${contract?.riskTier !== undefined ? html`<strong class="risk">${agentText(contract.riskTier)}</strong>` : html`<span class="muted">not stated</span>`}</dd>
<dt>Policy reason</dt><dd>${p.matchedRules.length > 0 ? html`rules ${agentText(p.matchedRules.join(", "))}; ` : ""}${agentText(p.reasonCodes.join(", "))}</dd>
<dt>Agent</dt><dd>${agentText(p.principalId)}</dd>
<dt>Trust score</dt><dd>${trust === undefined ? html`<span class="muted">APAE trust is off</span>` : html`${trust.score.toFixed(3)} (${trust.status}, confidence ${trust.confidence})`}</dd>
<dt>Run</dt><dd><code>${p.runId}</code></dd>
<dt>Run taint</dt><dd>${r.taintLabels.length === 0 ? html`<span class="muted">untainted</span>` : r.taintLabels.map((t) => html`<span class="taint">${agentText(`${t.source}: ${t.origin}`)}</span> `)}</dd>
</dl>`;
}

function recent(events: Decided[]): Html {
  const shown = events.slice(-9, -1).reverse();
  if (shown.length === 0) return html`<p class="muted">No earlier actions in this run.</p>`;
  return html`<ol class="recent">${shown.map(
    (e) =>
      html`<li>${agentText(e.tool ?? `${e.toolClass}.${e.action}`)}: <strong>${e.decision}</strong> <span class="muted">${e.reasonCodes.join(", ")}</span></li>`,
  )}</ol>`;
}

/** One pending step-up: what the approver judges, and the decision form. */
export function approvalItem(p: ApprovalRequest, c: ItemContext): Html {
  const tool = p.request.tool === undefined ? undefined : c.runtime.contracts?.get(p.request.tool);
  const events = decidedEvents(c.runtime, p.runId);
  // The run's latest step-up for this tool and action: the call waiting here.
  const r = p.request;
  const pending = [...events]
    .reverse()
    .find(
      (e) =>
        e.decision === "step_up" && e.toolClass === r.toolClass && e.action === r.action && e.tool === r.tool,
    );
  const params = Object.entries(p.request.parameters);
  const rows = params.map(
    ([k, v]) =>
      html`<tr><th scope="row">${agentText(k)}</th><td>${agentValue(v)}</td><td>${tool?.args.get(k)?.type ?? "—"}</td><td>${provenanceOf(pending, k)}</td></tr>`,
  );
  const hid = `h-${p.id}`;
  return html`<li class="approval" id="approval-${p.id}" data-id="${p.id}" data-expires="${p.expiresAt}">
<article aria-labelledby="${hid}">
<h2 id="${hid}">${agentText(p.request.tool ?? p.request.action)} <span class="muted">needs ${p.approverRole}</span></h2>
<p class="countdown">Times out at <time datetime="${p.expiresAt}">${p.expiresAt}</time> <span class="remaining"></span></p>
${facts(p, c.runtime)}
<table class="params"><caption>Parameters (agent-controlled)</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Value</th><th scope="col">Type</th><th scope="col">Provenance</th></tr></thead>
<tbody>${rows}</tbody></table>
<h3>Recent actions in this run</h3>
${recent(events)}
${decisionForm(p, c, tool)}
</article>
</li>`;
}

function decisionForm(p: ApprovalRequest, c: ItemContext, tool: CompiledTool | undefined): Html {
  const id = p.id;
  const fields = Object.entries(p.request.parameters).map(
    ([k, v]) => html`<div class="field">${editorField(id, k, v, tool)}</div>`,
  );
  return html`<form method="post" action="${c.base}/approvals/${id}" class="decide" data-decision-id="${p.decisionId}" data-approver-id="${c.approverId}" data-original="${JSON.stringify(p.request.parameters)}">
<input type="hidden" name="csrf" value="${c.csrfToken}">
<input type="hidden" name="parameters" value="">
<input type="hidden" name="sig" value="">
<input type="hidden" name="key_id" value="">
<input type="hidden" name="time" value="">
<fieldset><legend>Decision</legend>
<label><input type="radio" name="outcome" value="approve" required> Approve</label>
<label><input type="radio" name="outcome" value="deny"> Deny</label>
<label><input type="radio" name="outcome" value="modify"> Modify parameters</label>
</fieldset>
<fieldset class="editor"><legend>Modified parameters (used with Modify)</legend>${fields}
<div class="diff" aria-live="polite"></div></fieldset>
<label for="a-${id}-why">Justification (required, at least 10 characters)</label>
<input type="text" id="a-${id}-why" name="justification" required minlength="10" maxlength="2000" autocomplete="off">
<p class="status" role="status"></p>
<button type="submit">Sign and send decision</button>
</form>`;
}

/** The rows of a parameter diff: every name in either set, changed ones marked. */
export function parameterDiff(
  before: Readonly<Record<string, unknown>>,
  after: Readonly<Record<string, unknown>>,
): { name: string; before: string | undefined; after: string | undefined; changed: boolean }[] {
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return names.map((name) => {
    const b = Object.hasOwn(before, name) ? JSON.stringify(before[name]) : undefined;
    const a = Object.hasOwn(after, name) ? JSON.stringify(after[name]) : undefined;
    return { name, before: b, after: a, changed: a !== b };
  });
}

export function diffTable(before: Record<string, unknown>, after: Record<string, unknown>): Html {
  const rows = parameterDiff(before, after).map(
    (r) =>
      html`<tr class="${r.changed ? "changed" : ""}"><th scope="row">${agentText(r.name)}</th><td>${r.before === undefined ? html`<span class="muted">absent</span>` : agentText(r.before)}</td><td>${r.after === undefined ? html`<span class="muted">absent</span>` : agentText(r.after)}</td><td>${r.changed ? "changed" : ""}</td></tr>`,
  );
  return html`<table class="diff"><caption>Parameters: before and after</caption><thead><tr><th scope="col">Name</th><th scope="col">Before</th><th scope="col">After</th><th scope="col">Change</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/**
 * A deferred action: only its summary (tool class, action, tool) is held, and its release is
 * not approver-signed (docs/identity.md, signed approvals); approve releases it, deny refuses.
 */
export function deferredItem(d: DeferredItem, c: ItemContext): Html {
  const s = d.summary;
  const hid = `h-${d.id}`;
  return html`<li class="approval deferred" id="approval-${d.id}" data-id="${d.id}" data-expires="${d.expiresAt}">
<article aria-labelledby="${hid}">
<h2 id="${hid}">${agentText(s.tool ?? `${s.toolClass}.${s.action}`)} <span class="muted">deferred</span></h2>
<p class="countdown">Times out at <time datetime="${d.expiresAt}">${d.expiresAt}</time> <span class="remaining"></span></p>
<dl class="facts">
<dt>Tool</dt><dd>${agentText(s.tool ?? "no contract")} <span class="muted">(${agentText(s.toolClass)} / ${agentText(s.action)})</span></dd>
<dt>Agent</dt><dd>${d.principalId === undefined ? html`<span class="muted">unknown</span>` : agentText(d.principalId)}</dd>
<dt>Run</dt><dd><code>${d.runId}</code></dd>
</dl>
<form method="post" action="${c.base}/approvals/${d.id}" class="release">
<input type="hidden" name="csrf" value="${c.csrfToken}">
<fieldset><legend>Release</legend>
<label><input type="radio" name="outcome" value="approve" required> Release (allow)</label>
<label><input type="radio" name="outcome" value="deny"> Deny</label>
</fieldset>
<label for="a-${d.id}-why">Justification (required, at least 10 characters)</label>
<input type="text" id="a-${d.id}-why" name="justification" required minlength="10" maxlength="2000" autocomplete="off">
<button type="submit">Send decision</button>
</form>
</article>
</li>`;
}
