// Prometheus text exposition (format 0.0.4) for the sidecar: decisions by verdict, by tool
// and by reason code, a decision latency histogram, HTTP responses by status, and gauges
// read at scrape time (breaker states, approval and deferral queue depth, in-flight
// requests). Hand-written: a dozen series do not justify a metrics dependency.
//
// Label values are bounded: a tool label is a contract the registry holds, a reason label
// a code of the Gate's code table (parametrised codes by their family, policy rules as
// `RULE:<id>`); anything else — and anything past MAX_LABEL_VALUES distinct values — is
// counted as "other", so a flood of invented tool names cannot grow the exposition.

import { CONTEXT_REASON_CODES, GATE_REASON_CODES } from "../gate/index.js";

export const DECISION_BUCKETS_S = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300,
] as const;

const BREAKER_VALUE = { closed: 0, half_open: 1, open: 2 } as const;

/** Distinct values one label may take before new ones count as "other". */
export const MAX_LABEL_VALUES = 256;
export const OTHER = "other";

const FIXED_CODES: ReadonlySet<string> = new Set([...GATE_REASON_CODES, ...CONTEXT_REASON_CODES]);
const CODE_FAMILIES = [
  "contract_param_invalid",
  "contract_modify_invalid",
  "behavior",
  "ERR_CAPABILITY",
] as const;

/** The label a reason code is counted under. */
export function reasonLabel(code: string): string {
  if (FIXED_CODES.has(code) || code === "ERR_DELEGATION_CEILING") return code;
  for (const f of CODE_FAMILIES) if (code.startsWith(f)) return f;
  if (/^RULE:[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,127}$/.test(code)) return code;
  return OTHER;
}

export interface MetricsOptions {
  /** Whether a tool name is a contract of the registry (default: none is). */
  isKnownTool?: (name: string) => boolean;
}

export interface GaugeSource {
  approvalsPending(): number;
  deferredPending(): number;
  inFlight(): number;
  /** The fair decision queue: calls being served, and waiting their principal's turn. */
  fairQueue?(): { active: number; queued: number };
  breakers(): { tool: string; state: keyof typeof BREAKER_VALUE }[];
}

const escapeLabel = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');

export class SidecarMetrics {
  // Keyed without building a string per request: endpoint, then verdict; status as a number.
  readonly #decisions = new Map<string, Map<string, number>>();
  readonly #http = new Map<number, number>();
  readonly #buckets = new Array<number>(DECISION_BUCKETS_S.length).fill(0);
  #sum = 0;
  #count = 0;
  #faults = new Map<string, number>();
  /** tool → decision → count */
  readonly #tools = new Map<string, Map<string, number>>();
  readonly #reasons = new Map<string, number>();
  readonly #isKnownTool: (name: string) => boolean;

  constructor(o: MetricsOptions = {}) {
    this.#isKnownTool = o.isKnownTool ?? (() => false);
  }

  /** One decision's tool (undefined: a call that named none) and reason codes. */
  outcome(tool: string | undefined, decision: string, reasonCodes: readonly string[]): void {
    let label = tool === undefined ? "none" : this.#isKnownTool(tool) ? tool : OTHER;
    if (!this.#tools.has(label) && this.#tools.size >= MAX_LABEL_VALUES) label = OTHER;
    let byDecision = this.#tools.get(label);
    if (byDecision === undefined) {
      byDecision = new Map();
      this.#tools.set(label, byDecision);
    }
    byDecision.set(decision, (byDecision.get(decision) ?? 0) + 1);
    for (const code of reasonCodes) {
      let r = reasonLabel(code);
      if (!this.#reasons.has(r) && this.#reasons.size >= MAX_LABEL_VALUES) r = OTHER;
      this.#reasons.set(r, (this.#reasons.get(r) ?? 0) + 1);
    }
  }

  /** One Gate decision: its final verdict, the endpoint, and how long the Gate took. */
  decision(endpoint: "execute" | "decide", decision: string, seconds: number): void {
    let verdicts = this.#decisions.get(endpoint);
    if (verdicts === undefined) {
      verdicts = new Map();
      this.#decisions.set(endpoint, verdicts);
    }
    verdicts.set(decision, (verdicts.get(decision) ?? 0) + 1);
    // Only the first bucket that holds the value is counted; render() accumulates.
    let i = 0;
    while (i < DECISION_BUCKETS_S.length && seconds > (DECISION_BUCKETS_S[i] as number)) i++;
    if (i < DECISION_BUCKETS_S.length) this.#buckets[i] = (this.#buckets[i] as number) + 1;
    this.#sum += seconds;
    this.#count++;
  }

  fault(kind: string): void {
    this.#faults.set(kind, (this.#faults.get(kind) ?? 0) + 1);
  }

  response(status: number): void {
    this.#http.set(status, (this.#http.get(status) ?? 0) + 1);
  }

  /** The per-tool and per-reason-code counters. */
  #renderOutcomes(out: string[]): void {
    out.push(
      "# HELP warden_tool_decisions_total Gate decisions by contract (unknown tools: other) and verdict.",
    );
    out.push("# TYPE warden_tool_decisions_total counter");
    for (const tool of [...this.#tools.keys()].sort()) {
      const byDecision = this.#tools.get(tool) as Map<string, number>;
      for (const decision of [...byDecision.keys()].sort())
        out.push(
          `warden_tool_decisions_total{decision="${escapeLabel(decision)}",tool="${escapeLabel(tool)}"} ${byDecision.get(decision)}`,
        );
    }
    out.push(
      "# HELP warden_reason_codes_total Reason codes of Gate decisions (outside the code table: other).",
    );
    out.push("# TYPE warden_reason_codes_total counter");
    for (const [code, n] of [...this.#reasons].sort((a, b) => (a[0] < b[0] ? -1 : 1)))
      out.push(`warden_reason_codes_total{code="${escapeLabel(code)}"} ${n}`);
  }

  render(g: GaugeSource): string {
    const out: string[] = [];
    out.push("# HELP warden_decisions_total Gate decisions by final verdict.");
    out.push("# TYPE warden_decisions_total counter");
    for (const endpoint of [...this.#decisions.keys()].sort()) {
      const verdicts = this.#decisions.get(endpoint) as Map<string, number>;
      for (const decision of [...verdicts.keys()].sort()) {
        out.push(
          `warden_decisions_total{decision="${escapeLabel(decision)}",endpoint="${endpoint}"} ${verdicts.get(decision)}`,
        );
      }
    }
    this.#renderOutcomes(out);
    out.push(
      "# HELP warden_decision_duration_seconds Time the Gate took to decide (including approval waits).",
    );
    out.push("# TYPE warden_decision_duration_seconds histogram");
    let cumulative = 0;
    DECISION_BUCKETS_S.forEach((le, i) => {
      cumulative += this.#buckets[i] as number;
      out.push(`warden_decision_duration_seconds_bucket{le="${le}"} ${cumulative}`);
    });
    out.push(`warden_decision_duration_seconds_bucket{le="+Inf"} ${this.#count}`);
    out.push(`warden_decision_duration_seconds_sum ${this.#sum}`);
    out.push(`warden_decision_duration_seconds_count ${this.#count}`);
    out.push("# HELP warden_faults_total Fail-closed answers by cause.");
    out.push("# TYPE warden_faults_total counter");
    for (const [k, n] of [...this.#faults].sort())
      out.push(`warden_faults_total{fault="${escapeLabel(k)}"} ${n}`);
    out.push("# HELP warden_http_responses_total HTTP responses by status code.");
    out.push("# TYPE warden_http_responses_total counter");
    for (const [k, n] of [...this.#http].sort((a, b) => a[0] - b[0]))
      out.push(`warden_http_responses_total{status="${k}"} ${n}`);
    out.push("# HELP warden_breaker_state Circuit breaker state per tool (0 closed, 1 half_open, 2 open).");
    out.push("# TYPE warden_breaker_state gauge");
    for (const b of g.breakers())
      out.push(`warden_breaker_state{tool="${escapeLabel(b.tool)}"} ${BREAKER_VALUE[b.state]}`);
    out.push("# HELP warden_approvals_pending Step-up approvals waiting for a human.");
    out.push("# TYPE warden_approvals_pending gauge");
    out.push(`warden_approvals_pending ${g.approvalsPending()}`);
    out.push("# HELP warden_deferred_pending Deferred actions held.");
    out.push("# TYPE warden_deferred_pending gauge");
    out.push(`warden_deferred_pending ${g.deferredPending()}`);
    out.push("# HELP warden_http_in_flight Requests being handled.");
    out.push("# TYPE warden_http_in_flight gauge");
    out.push(`warden_http_in_flight ${g.inFlight()}`);
    const fair = g.fairQueue?.();
    if (fair !== undefined) {
      out.push("# HELP warden_decide_queue_active Decisions being served by the fair queue.");
      out.push("# TYPE warden_decide_queue_active gauge");
      out.push(`warden_decide_queue_active ${fair.active}`);
      out.push("# HELP warden_decide_queue_waiting Decisions waiting their principal's turn.");
      out.push("# TYPE warden_decide_queue_waiting gauge");
      out.push(`warden_decide_queue_waiting ${fair.queued}`);
    }
    return `${out.join("\n")}\n`;
  }
}
