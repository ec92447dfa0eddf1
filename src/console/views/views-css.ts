// The audit views' style sheet, served by the console plugin as a file (strict CSP:
// `style-src 'self'`, no style attributes in the markup). Classes only.
export const VIEWS_CSS = `
.view-error { border: 2px solid #b00020; background: #fdecea; color: #5f0010; padding: .5rem .75rem; margin: .5rem 0; }
.agent-text, .canonical { white-space: pre-wrap; overflow-wrap: anywhere; }
.canonical { max-height: 40rem; overflow: auto; background: #f6f6f6; padding: .5rem; border: 1px solid #ccc; }
table.runs, table.timeline, table.journal, table.trust-history, table.whatif-diff { border-collapse: collapse; width: 100%; }
table.runs td, table.runs th, table.timeline td, table.timeline th, table.journal td, table.journal th,
table.trust-history td, table.trust-history th, table.whatif-diff td, table.whatif-diff th {
  border-bottom: 1px solid #ddd; padding: .25rem .5rem; text-align: left; vertical-align: top; }
caption { text-align: left; font-weight: bold; padding: .25rem 0; }
.decision { font-weight: bold; padding: 0 .25rem; border-radius: 3px; }
.decision-allow { color: #0b5d1e; }
.decision-modify { color: #6b4e00; }
.decision-deny { color: #9b0014; }
.decision-step_up, .decision-defer { color: #4a2a8a; }
tr.tl-denial { background: #fff1f1; }
tr.tl-approval { background: #f3f0ff; }
.quarantined, .verify-bad { color: #9b0014; font-weight: bold; }
.clear, .verify-ok { color: #0b5d1e; }
.unknown, .empty, .prov-none, .apae-off { color: #555; }
.cut { color: #6b4e00; font-style: italic; }
.bad-seq { font-size: 1.2em; }
.prov-graph, .prov-graph ul { list-style: none; padding-left: 1.25rem; border-left: 2px solid #ccc; }
.prov-step { margin: .5rem 0; }
.prov-source { color: #333; }
.prov-kind { font-family: monospace; background: #eef; padding: 0 .25rem; }
.taint { color: #6b4e00; margin-left: .5rem; }
.facts dt { font-weight: bold; }
.facts dd { margin: 0 0 .25rem 1rem; }
.trust-line { display: block; margin: .5rem 0; }
.trust-polyline { fill: none; stroke: #1a4fa3; stroke-width: 2; }
.pager { margin: .5rem 0; }
.pager a { padding: .25rem .5rem; }
form.filter label, .journal-actions label, form.whatif label { display: inline-block; margin: .25rem .5rem .25rem 0; }
form.whatif textarea { display: block; width: 100%; font-family: monospace; }
`;
