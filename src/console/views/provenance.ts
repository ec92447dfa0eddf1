// The run's taint / provenance graph, server-rendered as nested lists (no client script):
// for each decision, each parameter value (as the agent sent it, made visible) and where
// it came from — the earlier step whose output the Gate found it in (its value provenance,
// journaled on the decision), the kind of match and the taint it carried. A session's
// output numbers are tied to journal decisions through the run's live session chain
// (call.result → call.decided → request hash); a run no longer in memory shows the
// session output number instead. At most MAX_GRAPH_NODES nodes; past that, "cut".
import { canonicalJson, GATE_DECISION, type GateDecisionBody } from "../../contracts/index.js";
import type { JournalEntry } from "../../journal/index.js";
import type { Runtime } from "../../runtime/index.js";
import { agentText, type Html, html } from "../html.js";
import type { ConsoleViewContext } from "../page.js";
import { decisionTag, href, MAX_GRAPH_NODES } from "./common.js";

interface Step {
  n: number;
  seq: number;
  body: GateDecisionBody;
}

interface Hit {
  path: string;
  kind: string;
  outputs: number[];
}

/** Session output seq → the step (journal decision) whose result it was, from the live session. */
function outputSources(rt: Runtime, runId: string, steps: readonly Step[]): Map<number, Step> {
  const out = new Map<number, Step>();
  const session = rt.sessions.get(runId);
  if (session === undefined) return out;
  const byHash = new Map(steps.map((s) => [s.body.dare.inputs.request_hash as string, s]));
  const byCall = new Map<number, Step>();
  for (const e of session.events()) {
    if (e.type === "call.decided") {
      const s = byHash.get(e.requestHash);
      if (s !== undefined) byCall.set(e.call, s);
    } else if (e.type === "call.result") {
      const s = byCall.get(e.call);
      if (s !== undefined) out.set(e.seq, s);
    }
  }
  return out;
}

function hitsOf(body: GateDecisionBody): Hit[] {
  return body.provenance.flatMap((p) => {
    const h = p as Partial<Hit>;
    if (typeof h.path !== "string" || typeof h.kind !== "string" || !Array.isArray(h.outputs)) return [];
    return [{ path: h.path, kind: h.kind, outputs: h.outputs.filter((o) => typeof o === "number") }];
  });
}

/** The top-level parameter a provenance path is under (`body.lines[2]` → `body`). */
function rootOf(path: string): string {
  return path.split(/[.[]/, 1)[0] ?? path;
}

class Budget {
  used = 0;
  cut = false;
  take(): boolean {
    if (this.used >= MAX_GRAPH_NODES) {
      this.cut = true;
      return false;
    }
    this.used++;
    return true;
  }
}

interface Graph {
  ctx: ConsoleViewContext;
  sources: Map<number, Step>;
  budget: Budget;
}

function sourceItem(g: Graph, hit: Hit, output: number): Html {
  const from = g.sources.get(output);
  const what =
    from === undefined
      ? html`session output #${output} (the run is no longer in memory, or the output was not a decision's)`
      : html`<a href="${href(g.ctx, ["journal", String(from.seq)])}">step ${from.n}</a> ${agentText(
          from.body.tool ?? `${from.body.tool_class}.${from.body.action}`,
        )} output`;
  return html`<li class="prov-source">from ${what} <span class="prov-kind">${hit.kind}</span></li>`;
}

function paramItem(g: Graph, step: Step, name: string, value: unknown): Html {
  const hits = hitsOf(step.body).filter((h) => rootOf(h.path) === name);
  const sources: Html[] = [];
  for (const h of hits)
    for (const o of h.outputs) {
      if (!g.budget.take()) break;
      sources.push(sourceItem(g, h, o));
    }
  return html`<li class="prov-param"><code>${agentText(name)}</code> = ${agentText(
    typeof value === "string" ? value : canonicalJson(value),
  )}${sources.length > 0 ? html`<ul>${sources}</ul>` : html` <span class="prov-none">no tracked source</span>`}</li>`;
}

function stepItem(g: Graph, step: Step): Html {
  const params: Html[] = [];
  for (const [name, value] of Object.entries(step.body.parameters)) {
    if (!g.budget.take()) break;
    params.push(paramItem(g, step, name, value));
  }
  const elided = step.body.parameters_elided;
  const taint = step.body.taint.map((t) =>
    agentText(`${t.source}${t.origin !== "" ? ` (${t.origin})` : ""}`),
  );
  return html`<li class="prov-step"><a href="${href(g.ctx, ["journal", String(step.seq)])}">step ${step.n}</a>
${agentText(step.body.tool ?? `${step.body.tool_class}.${step.body.action}`)} ${decisionTag(step.body.decision)}
${taint.length > 0 ? html`<span class="taint">taint: ${taint.map((t, i) => html`${i > 0 ? ", " : ""}${t}`)}</span>` : ""}
${elided !== undefined ? html`<span class="prov-none">parameters elided (${elided.bytes} bytes)</span>` : ""}
${step.body.parameters_defaults !== undefined ? html`<span class="prov-none">members at false or empty not journaled</span>` : ""}
${params.length > 0 ? html`<ul>${params}</ul>` : ""}</li>`;
}

/** The provenance graph of the run's decisions among `entries` (nested lists, bounded). */
export function provenanceGraph(
  ctx: ConsoleViewContext,
  runId: string,
  entries: readonly JournalEntry[],
): Html {
  const steps: Step[] = entries
    .filter((e) => e.type === GATE_DECISION)
    .map((e, i) => ({ n: i + 1, seq: e.seq, body: e.body as GateDecisionBody }));
  if (steps.length === 0) return html`<p class="empty">No decisions on this page of the run.</p>`;
  const g: Graph = { ctx, sources: outputSources(ctx.runtime, runId, steps), budget: new Budget() };
  const items: Html[] = [];
  for (const s of steps) {
    if (!g.budget.take()) break;
    items.push(stepItem(g, s));
  }
  return html`<ol class="prov-graph">${items}</ol>${
    g.budget.cut
      ? html`<p class="cut" role="status">Graph cut at ${MAX_GRAPH_NODES} nodes; open the entries for the rest.</p>`
      : ""
  }`;
}
