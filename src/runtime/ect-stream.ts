// The runtime's ECT stream (APAE over draft-nennemann-wimse-ect): one Execution Context
// Token for every governed action's decision and one for its outcome, issued for the agent
// (iss = the principal) by its runtime (signed with the runtime's ECT key at L2/L3).
// It sits between the Gate and the journal: when the Gate appends a decision record, the
// decision ECT is built (and signed) first and both appends are issued in the same turn,
// so at L3 the ledger entry shares the decision's group commit (no extra fsync). `par` of
// a decision names the outcome ECTs whose outputs the call's parameters came from (the
// session's value provenance: output seqs → outcome jtis); an outcome's `par` is its
// decision. Contracts' `[apae]` claims (data_source, classification, retention,
// transformations, target) go into `ext`; a checkpoint tool's ECTs are `atd:checkpoint`.
import {
  GATE_DECISION,
  GATE_RESULT,
  type GateDecisionBody,
  type GateResultBody,
} from "../contracts/index.js";
import type { GateJournal } from "../gate/index.js";
import type { BuiltAppend } from "../journal/index.js";
import type { ApaeToolSpec } from "../tools/index.js";
import {
  CHECKPOINT_ACT,
  type EctClaims,
  type EctLedger,
  type EctLevel,
  type EctSigningKey,
  ectClaims,
  encodeEct,
} from "../trust/index.js";

type DecisionBody = import("zod").infer<typeof GateDecisionBody>;
type ResultBody = import("zod").infer<typeof GateResultBody>;

/** One emitted action ECT, handed to the listener once its journal entries are durable. */
export interface ActionEct {
  token: string;
  claims: EctClaims;
  phase: "decision" | "outcome";
  principal: string;
  runId: string;
  /** The decision record's body (decision phase) — what the denial feed reads. */
  decision?: DecisionBody;
  /** How the execution ended (outcome phase, when the executor reported it). */
  outcome?: ResultBody["outcome"];
}

export interface EctStreamOptions {
  level: EctLevel;
  /** Required at L2/L3. */
  key?: EctSigningKey;
  /** Required at L3. */
  ledger?: Pick<EctLedger, "append">;
  /** `aud` of every action ECT (the deployment's own audit audience). */
  audience: string;
  clock: () => number;
  /** The contract's `[apae]` section of a tool (undefined: none declared). */
  toolClaims: (tool: string) => ApaeToolSpec | undefined;
  /** Told of each ECT after its entries are durable (behaviour verifier, denial feed). */
  onEct: (e: ActionEct) => void;
  /** Runs whose output → jti map is kept (default 4096), outputs per run (default 1024). */
  maxRuns?: number;
  maxOutputsPerRun?: number;
}

interface Decided {
  jti: string;
  tool: string;
  principal: string;
  runId: string;
}

const HEX = /^sha256:([0-9a-f]{64})$/;
/** `sha256:<hex>` as the draft's base64url hash (the same digest). */
function b64Hash(h: string | undefined): string | undefined {
  const m = h === undefined ? null : HEX.exec(h);
  return m === null ? undefined : Buffer.from(m[1] as string, "hex").toString("base64url");
}

/** Drops the oldest key of an insertion-ordered map beyond `max`. */
function bound<K, V>(m: Map<K, V>, max: number): void {
  while (m.size > max) {
    const first = m.keys().next();
    if (first.done === true) return;
    m.delete(first.value);
  }
}

type Ext = NonNullable<EctClaims["ext"]>;

function claimsExt(t: ApaeToolSpec | undefined, params: Record<string, unknown>): Ext {
  if (t === undefined) return {};
  const target = t.target_arg === undefined ? undefined : params[t.target_arg];
  return {
    "apae.data_source": t.data_source,
    "apae.data_classification": t.data_classification,
    "apae.retention_days": t.retention_days,
    "apae.transformations": [...t.transformations],
    ...(typeof target === "string" ? { "apae.target": target } : {}),
  };
}

export class EctStream {
  readonly level: EctLevel;
  readonly #o: EctStreamOptions;
  /** Decisions awaiting their outcome (bounded: a result never reported is forgotten). */
  readonly #decided = new Map<string, Decided>();
  /** Per run: session output seq → the outcome ECT's jti. */
  readonly #outputs = new Map<string, Map<number, string>>();
  /** Set by the Gate's onResult just before the result is journaled. */
  readonly #resultSeq = new Map<string, number>();
  readonly #listeners = new Set<(e: ActionEct) => void>();

  constructor(o: EctStreamOptions) {
    this.#o = o;
    this.level = o.level;
  }

  /** Also tells `listener` of every action ECT (an audit tap, the demo); returns the unsubscribe. */
  listen(listener: (e: ActionEct) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #tell(e: ActionEct): void {
    this.#o.onEct(e);
    for (const l of this.#listeners) l(e);
  }

  /** The Gate's `onResult` port. */
  readonly onResult = (r: { decisionId: string; runId: string; resultSeq: number }): void => {
    this.#resultSeq.set(r.decisionId, r.resultSeq);
    bound(this.#resultSeq, 1024);
  };

  /** The journal as the Gate sees it: decisions and results also emit their ECTs. */
  wrap(journal: GateJournal): GateJournal {
    return {
      append: (input) => journal.append(input),
      appendBuilt: (input) => {
        if (input.type === GATE_DECISION) return this.#decision(journal, input);
        if (input.type === GATE_RESULT) return this.#outcome(journal, input);
        return journal.appendBuilt(input);
      },
    };
  }

  #act(tool: string): string {
    return this.#o.toolClaims(tool)?.checkpoint === true ? CHECKPOINT_ACT : tool;
  }

  async #encode(claims: EctClaims): Promise<string> {
    return encodeEct(claims, this.level, this.#o.key);
  }

  /** Signs, then issues the Gate's append and the ledger append in one turn (one group commit). */
  async #together(
    journal: GateJournal,
    input: BuiltAppend,
    claims: EctClaims,
    issued?: () => void,
  ): Promise<{ entry: Awaited<ReturnType<GateJournal["appendBuilt"]>>; token: string }> {
    const token = await this.#encode(claims);
    const entry = journal.appendBuilt(input);
    const ledger = this.#o.ledger?.append([{ token, claims }]);
    // The jti is in the ledger's index from here on: a later call may cite it.
    issued?.();
    const [e, l] = await Promise.all([entry, ledger]);
    if (l !== undefined && !l.ok) throw new Error(`ECT ledger refused ${l.jti}: ${l.code}`);
    return { entry: e, token };
  }

  async #decision(journal: GateJournal, input: BuiltAppend) {
    const b = input.body as DecisionBody;
    const runId = input.run_id ?? "";
    const tool = b.tool ?? `${b.tool_class}.${b.action}`;
    const outputs = this.#outputs.get(runId);
    const par = new Set<string>();
    for (const p of b.provenance ?? []) {
      const seqs = p !== null && typeof p === "object" && !Array.isArray(p) ? p.outputs : undefined;
      for (const seq of Array.isArray(seqs) ? seqs : []) {
        const jti = typeof seq === "number" ? outputs?.get(seq) : undefined;
        if (jti !== undefined) par.add(jti);
      }
    }
    const inp = b64Hash(b.dare.inputs.request_hash);
    const claims = ectClaims(
      {
        exec_act: this.#act(tool),
        aud: this.#o.audience,
        par: [...par],
        ...(inp !== undefined ? { inp_hash: inp } : {}),
        pol: b.dare.bundles.policy_bundle_hash,
        pol_decision: b.decision,
        ext: {
          "warden.phase": "decision",
          "warden.tool": tool,
          "warden.decision_id": b.decision_id,
          "warden.run_id": runId,
          ...claimsExt(this.#o.toolClaims(tool), b.parameters ?? {}),
        },
      },
      b.principal_id,
      this.#o.clock(),
    );
    const { entry, token } = await this.#together(journal, input, claims);
    if (b.decision !== "deny") {
      this.#decided.set(b.decision_id, { jti: claims.jti, tool, principal: b.principal_id, runId });
      bound(this.#decided, 65_536);
    }
    this.#tell({ token, claims, phase: "decision", principal: b.principal_id, runId, decision: b });
    return entry;
  }

  async #outcome(journal: GateJournal, input: BuiltAppend) {
    const b = input.body as ResultBody;
    const d = this.#decided.get(b.decision_id);
    const seq = this.#resultSeq.get(b.decision_id);
    this.#decided.delete(b.decision_id);
    this.#resultSeq.delete(b.decision_id);
    if (d === undefined) return journal.appendBuilt(input);
    const out = b64Hash(b.output_hash);
    const claims = ectClaims(
      {
        exec_act: this.#act(d.tool),
        aud: this.#o.audience,
        par: [d.jti],
        ...(out !== undefined ? { out_hash: out } : {}),
        ext: {
          "warden.phase": "outcome",
          "warden.tool": d.tool,
          "warden.decision_id": b.decision_id,
          "warden.run_id": d.runId,
          "warden.classification": b.classification,
          ...(b.outcome !== undefined ? { "warden.outcome": b.outcome } : {}),
          ...claimsExt(this.#o.toolClaims(d.tool), {}),
        },
      },
      d.principal,
      this.#o.clock(),
    );
    const { entry, token } = await this.#together(journal, input, claims, () => {
      if (seq !== undefined) this.#remember(d.runId, seq, claims.jti);
    });
    this.#tell({
      token,
      claims,
      phase: "outcome",
      principal: d.principal,
      runId: d.runId,
      ...(b.outcome !== undefined ? { outcome: b.outcome } : {}),
    });
    return entry;
  }

  #remember(runId: string, seq: number, jti: string): void {
    let m = this.#outputs.get(runId);
    if (m === undefined) {
      m = new Map();
      this.#outputs.set(runId, m);
      bound(this.#outputs, this.#o.maxRuns ?? 4096);
    }
    m.set(seq, jti);
    bound(m, this.#o.maxOutputsPerRun ?? 1024);
  }
}
