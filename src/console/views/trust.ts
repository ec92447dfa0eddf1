// The run's agent in APAE terms: its current trust row (score, confidence, status,
// quarantine) from the runtime's trust engine, and its score history from the journal's
// `warden.trust.step` entries (each step's before → after, newest first, bounded), drawn
// as a small inline SVG line (numbers only) and a table. "APAE off" when not configured.
import type { JournalEntry } from "../../journal/index.js";
import type { Runtime } from "../../runtime/index.js";
import { TRUST_STEP_EVENT, type TrustStepBody } from "../../trust/index.js";
import { agentText, type Html, html, trusted } from "../html.js";

/** Trust steps read (newest first) to find one subject's history, and rows shown. */
const MAX_TRUST_SCAN = 2000;
const MAX_TRUST_ROWS = 50;

function sparkline(scores: readonly number[]): Html {
  if (scores.length < 2) return html``;
  const w = 200;
  const h = 40;
  const pts = scores
    .map((s, i) => `${((i / (scores.length - 1)) * w).toFixed(1)},${(h - s * h).toFixed(1)}`)
    .join(" ");
  // Only numbers formatted here go into the SVG; nothing agent-controlled.
  return trusted(
    `<svg class="trust-line" viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" role="img" aria-label="trust score over time"><polyline class="trust-polyline" points="${pts}"/></svg>`,
  );
}

function historyTable(steps: readonly TrustStepBody[]): Html {
  const rows = steps.map(
    (s) =>
      html`<tr><td>${s.time}</td><td>${s.kind}</td><td>${s.before.toFixed(3)} → ${s.after.toFixed(3)}</td><td>${
        s.note === undefined ? "" : agentText(s.note)
      }</td></tr>`,
  );
  return html`<table class="trust-history"><caption>Trust score history (newest first)</caption>
<thead><tr><th scope="col">time</th><th scope="col">event</th><th scope="col">score</th><th scope="col">note</th></tr></thead>
<tbody>${rows}</tbody></table>`;
}

/** The trust section of a run page for `principal`. */
export async function trustSection(rt: Runtime, principal: string | undefined): Promise<Html> {
  if (rt.apae === undefined)
    return html`<section class="trust" aria-labelledby="trust-h"><h2 id="trust-h">Trust</h2><p class="apae-off">APAE off: trust scores are not kept in this deployment.</p></section>`;
  if (principal === undefined)
    return html`<section class="trust" aria-labelledby="trust-h"><h2 id="trust-h">Trust</h2><p>No decision names this run's principal.</p></section>`;
  const v = rt.apae.viewOf(principal);
  const recent: JournalEntry[] = await rt.store.query({
    type: TRUST_STEP_EVENT,
    descending: true,
    limit: MAX_TRUST_SCAN,
  });
  const mine = recent
    .map((e) => e.body as TrustStepBody)
    .filter((b) => b.subject === principal)
    .slice(0, MAX_TRUST_ROWS);
  const quarantine =
    v.status === "quarantined"
      ? html`<strong class="quarantined">quarantined</strong>${
          v.quarantineUntil === null ? "" : html` until ${new Date(v.quarantineUntil).toISOString()}`
        }`
      : html`<span class="clear">active</span>`;
  return html`<section class="trust" aria-labelledby="trust-h"><h2 id="trust-h">Trust</h2>
<dl class="facts"><dt>agent</dt><dd>${agentText(principal)}</dd>
<dt>score</dt><dd>${v.score.toFixed(3)} (${v.confidence}, ${v.interactions} interactions)</dd>
<dt>status</dt><dd>${quarantine} (quarantined ${v.quarantineCount} times)</dd></dl>
${sparkline(mine.map((s) => s.after).reverse())}
${mine.length > 0 ? historyTable(mine) : html`<p class="empty">No trust steps recorded for this agent.</p>`}</section>`;
}
