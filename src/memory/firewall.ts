// The memory firewall (DARE memory governance, OATS memory poisoning). Every operation is
// a Gate action on its contract (memory_write/read/search/delete, toolClass `memory`):
// the Gate decides and journals before anything is stored or returned, and the firewall
// redeems the ticket like an executor. A write keeps the taint the Gate computed for the
// call (request labels, value provenance of the content, inherited taint), so a memory
// written from a web page stays web-tainted whenever it is read; a read reports that
// taint back to the Gate with the content, so what the agent does with it next is judged
// with the taint it carries. Reads see only what the principal, the run lineage and the
// principal's clearance allow; quarantined memories are never returned, and the runs that
// read one are listed from the store.
import { randomBytes } from "node:crypto";
import { type Embedder, mergeTaint } from "../context/index.js";
import { type DecisionId, decisionId, isoTime, type TaintLabel } from "../contracts/index.js";
import {
  type ExecutionTicket,
  type GateOutcome,
  type ReportedResult,
  redeemTicket,
  ticketOf,
} from "../gate/index.js";
import { defaultEventTypes } from "../journal/index.js";
import { fail, itemOf, messages, refusalOf, sha256, visibilityOf } from "./access.js";
import { clearanceRank, levelRank, type MemoryConfig, parseMemoryConfig } from "./config.js";
import { MEMORY_TOOL_NAMES, type MemoryOp } from "./contracts.js";
import { scanText } from "./detect.js";
import {
  MEMORY_DELETED,
  MEMORY_QUARANTINED,
  MEMORY_READ,
  MEMORY_REFUSED,
  MEMORY_WRITTEN,
  registerMemoryEventTypes,
} from "./events.js";
import { bm25, cosine, rank } from "./search.js";
import { type MemoryRead, type MemoryRecord, MemoryStore, type Visibility } from "./store.js";
import type {
  GrantedCaller,
  GrantedResult,
  MemoryCaller,
  MemoryErrorCode,
  MemoryFirewallOptions,
  MemoryItem,
  MemoryResult,
  MemoryRuntime,
  WriteInput,
} from "./types.js";

const MAX_DIMENSIONS = 4096;
const SYSTEM_RUN = "warden-memory";

/** A decision that allowed the operation: its id, the parameters it granted, the call's taint. */
interface Grant {
  decisionId: DecisionId;
  parameters: Readonly<Record<string, unknown>>;
  taint: TaintLabel[];
}

/**
 * How an operation settles its decision after the grant: self-governed, the firewall
 * reports the result to the Gate (or releases the decision); under a host's ticket the
 * report goes back to the host, which records it (the MCP gateway's local tools).
 */
interface Settle {
  done(report: ReportedResult): Promise<void>;
  refused(): void;
}

export class MemoryFirewall {
  readonly config: MemoryConfig;
  readonly #rt: MemoryRuntime;
  readonly #store: MemoryStore;
  readonly #embedder: Embedder | undefined;

  private constructor(rt: MemoryRuntime, config: MemoryConfig, store: MemoryStore, o: MemoryFirewallOptions) {
    this.#rt = rt;
    this.config = config;
    this.#store = store;
    this.#embedder = o.embedder;
  }

  /** Opens the store (`config.path`, 0600) over a composed runtime. Throws ERR_MEMORY_CONFIG_INVALID / ERR_MEMORY_STORE. */
  static open(rt: MemoryRuntime, config: unknown, options: MemoryFirewallOptions = {}): MemoryFirewall {
    const c = parseMemoryConfig(config);
    registerMemoryEventTypes(defaultEventTypes);
    return new MemoryFirewall(rt, c, MemoryStore.open(c.path, c.maxReadsPerMemory), options);
  }

  /** The firewall's own checks of a write, before the Gate: size, instructions, clearance, bounds. */
  async #precheck(caller: MemoryCaller, input: WriteInput): Promise<MemoryResult<never> | undefined> {
    const c = this.config;
    if (input.content.length > c.maxContentChars) {
      return fail("ERR_MEMORY_LIMIT", `content over ${c.maxContentChars} characters`);
    }
    // Scanned in the form that would be stored: the contract layer stores the NFKC form,
    // so full-width or ligature spellings of an instruction are caught too.
    const findings = scanText(input.content.normalize("NFKC")).injections;
    if (findings.length > 0) {
      await this.#refused(caller, "write", "ERR_MEMORY_INSTRUCTION", { findings });
      return fail("ERR_MEMORY_INSTRUCTION", "the content reads as instructions to an agent; not stored");
    }
    if (!c.classificationLevels.includes(input.classification)) {
      return fail("ERR_MEMORY_CLASSIFIED", "unknown classification level");
    }
    if (levelRank(c, input.classification) > clearanceRank(c, caller.principalId)) {
      await this.#refused(caller, "write", "ERR_MEMORY_CLASSIFIED");
      return fail("ERR_MEMORY_CLASSIFIED", "classification above the principal's clearance");
    }
    const full =
      this.#store.count() >= c.maxRecords ||
      this.#store.count(caller.principalId) >= c.maxRecordsPerPrincipal;
    return full ? fail("ERR_MEMORY_LIMIT", "the memory store is full for this principal") : undefined;
  }

  async write(caller: MemoryCaller, input: WriteInput): Promise<MemoryResult<{ id: string }>> {
    const refused = await this.#precheck(caller, input);
    if (refused !== undefined) return refused;
    const params = {
      content: input.content,
      classification: input.classification,
      scope: input.scope ?? "private",
    };
    const g = await this.#govern(caller, "write", params, input.taintLabels);
    if (!g.ok) return g;
    return this.#write(caller, g, this.#self(g.decisionId));
  }

  async #write(caller: MemoryCaller, g: Grant, settle: Settle): Promise<MemoryResult<{ id: string }>> {
    const content = String(g.parameters.content);
    const record: MemoryRecord = {
      id: `mem_${randomBytes(16).toString("hex")}`,
      principalId: caller.principalId,
      runId: caller.runId,
      lineage: this.#lineage(caller.runId),
      scope: g.parameters.scope === "shared" ? "shared" : "private",
      content,
      classification: String(g.parameters.classification),
      taint: g.taint,
      decisionId: g.decisionId,
      createdAt: this.#rt.clock(),
      quarantinedAt: null,
      quarantineReason: null,
      embedding: await this.#embed(content),
    };
    this.#store.insert(record);
    await settle.done({ data: { id: record.id }, classification: "public" });
    await this.#journal(caller.runId, MEMORY_WRITTEN, {
      memory_id: record.id,
      principal_id: caller.principalId,
      decision_id: g.decisionId,
      content_hash: sha256(content),
      classification: record.classification,
      scope: record.scope,
      lineage: record.lineage,
      taint: record.taint,
    });
    return { ok: true, value: { id: record.id }, taint: record.taint, decisionId: g.decisionId };
  }

  async read(caller: MemoryCaller, id: string): Promise<MemoryResult<MemoryItem>> {
    const g = await this.#govern(caller, "read", { id });
    if (!g.ok) return g;
    return this.#read(caller, g, this.#self(g.decisionId));
  }

  async #read(caller: MemoryCaller, g: Grant, settle: Settle): Promise<MemoryResult<MemoryItem>> {
    const id = String(g.parameters.id);
    const r = this.#store.get(id);
    const refusal = r === undefined ? "ERR_MEMORY_NOT_FOUND" : this.#refusal(caller, r);
    if (refusal !== undefined || r === undefined) {
      const code = refusal ?? "ERR_MEMORY_NOT_FOUND";
      settle.refused();
      await this.#refused(caller, "read", code, { memory_id: id, decision_id: g.decisionId });
      return fail(code, messages[code], { decisionId: g.decisionId });
    }
    const taint = await this.#served(caller, { decisionId: g.decisionId, settle }, "read", [r]);
    return { ok: true, value: itemOf(r), taint, decisionId: g.decisionId };
  }

  async search(caller: MemoryCaller, query: string, limit = 10): Promise<MemoryResult<MemoryItem[]>> {
    const g = await this.#govern(caller, "search", { query, limit });
    if (!g.ok) return g;
    return this.#search(caller, g, this.#self(g.decisionId));
  }

  async #search(caller: MemoryCaller, g: Grant, settle: Settle): Promise<MemoryResult<MemoryItem[]>> {
    const candidates = this.#store.visible(this.#visibility(caller), this.config.maxSearchScan);
    const q = String(g.parameters.query);
    const keyword = bm25(
      q,
      candidates.map((r) => r.content),
    );
    let semantic: (number | undefined)[] | undefined;
    const qv = await this.#embed(q);
    if (qv !== null)
      semantic = candidates.map((r) => (r.embedding === null ? undefined : cosine(qv, r.embedding)));
    const max = Math.min(Number(g.parameters.limit ?? 10), this.config.maxResults);
    const ranked = rank(keyword, semantic, candidates.length, max);
    const hits = ranked.flatMap((s) => {
      const r = candidates[s.index];
      return r === undefined ? [] : [{ r, score: s.score }];
    });
    const taint = await this.#served(
      caller,
      { decisionId: g.decisionId, settle },
      "search",
      hits.map((h) => h.r),
    );
    return { ok: true, value: hits.map((h) => itemOf(h.r, h.score)), taint, decisionId: g.decisionId };
  }

  async delete(caller: MemoryCaller, id: string): Promise<MemoryResult<{ id: string }>> {
    const g = await this.#govern(caller, "delete", { id });
    if (!g.ok) return g;
    return this.#delete(caller, g, this.#self(g.decisionId));
  }

  async #delete(caller: MemoryCaller, g: Grant, settle: Settle): Promise<MemoryResult<{ id: string }>> {
    const id = String(g.parameters.id);
    const r = this.#store.get(id);
    if (r === undefined || r.principalId !== caller.principalId) {
      settle.refused();
      await this.#refused(caller, "delete", "ERR_MEMORY_NOT_FOUND", {
        memory_id: id,
        decision_id: g.decisionId,
      });
      return fail("ERR_MEMORY_NOT_FOUND", messages.ERR_MEMORY_NOT_FOUND, { decisionId: g.decisionId });
    }
    this.#store.delete(id);
    await settle.done({ data: { id }, classification: "public" });
    await this.#journal(caller.runId, MEMORY_DELETED, {
      memory_id: id,
      principal_id: caller.principalId,
      decision_id: g.decisionId,
    });
    return { ok: true, value: { id }, taint: [], decisionId: g.decisionId };
  }

  /**
   * Performs an operation a host already had the Gate grant (the MCP gateway's local tools,
   * docs/memory.md): the ticket is the Gate's proof, so there is no second decision. It must
   * be a Gate-issued, unused ticket for this operation's contract, the caller's principal and
   * run; it is redeemed here. The firewall's own checks still apply (instruction scan,
   * clearance, bounds, read filters, quarantine, taint kept with a write: `caller.taint`, the
   * decision's effective taint). The host records the result with `report`.
   */
  async granted(op: MemoryOp, ticket: ExecutionTicket, caller: GrantedCaller): Promise<GrantedResult> {
    const tool = MEMORY_TOOL_NAMES[op];
    const redeemed = redeemTicket(ticket, { tool, toolClass: "memory", now: this.#rt.clock() });
    const denied = (message: string, reason: string): GrantedResult => ({
      ok: false,
      code: "ERR_MEMORY_DENIED",
      message,
      reasonCodes: [reason],
    });
    if (!redeemed.ok) return denied(`ticket refused: ${redeemed.code}`, redeemed.code);
    if (ticket.action !== op || ticket.principalId !== caller.principalId || ticket.runId !== caller.runId)
      return denied("the ticket was granted for another operation, principal or run", "ticket_mismatch");
    const who = { principalId: caller.principalId, runId: caller.runId };
    const g: Grant = {
      decisionId: decisionId(ticket.decisionId),
      parameters: redeemed.parameters,
      taint: [...caller.taint],
    };
    let report: ReportedResult | undefined;
    const settle: Settle = {
      done: async (r) => {
        report = r;
      },
      refused: () => undefined,
    };
    const p = g.parameters;
    let r: MemoryResult<unknown>;
    if (op === "write") {
      const input: WriteInput = {
        content: String(p.content),
        classification: String(p.classification),
        scope: p.scope === "shared" ? "shared" : "private",
      };
      r = (await this.#precheck(who, input)) ?? (await this.#write(who, g, settle));
    } else if (op === "read") r = await this.#read(who, g, settle);
    else if (op === "search") r = await this.#search(who, g, settle);
    else r = await this.#delete(who, g, settle);
    if (!r.ok) return { ...r, decisionId: ticket.decisionId };
    return { ...r, report: report ?? {} };
  }

  /**
   * Quarantines a poisoned memory (an operator's act, not an agent's: no Gate call) and
   * returns every run that read it, oldest first; journaled with that list. `found` false:
   * no such memory; `quarantined` false: it already was.
   */
  async quarantine(
    id: string,
    reason: string,
    by: string,
  ): Promise<{ found: boolean; quarantined: boolean; readers: MemoryRead[] }> {
    if (this.#store.get(id) === undefined) return { found: false, quarantined: false, readers: [] };
    const now = this.#rt.clock();
    const quarantined = this.#store.quarantine(id, reason.slice(0, 1024), now);
    const readers = this.#store.readsOf(id);
    if (quarantined) {
      await this.#journal(SYSTEM_RUN, MEMORY_QUARANTINED, {
        memory_id: id,
        reason: reason.slice(0, 1024),
        by: by.slice(0, 256),
        readers: readers.map((r) => ({ run_id: r.runId, principal_id: r.principalId, at: isoTime(r.at) })),
      });
    }
    return { found: true, quarantined, readers };
  }

  /** The runs that read a memory (oldest first; bounded by `maxReadsPerMemory`). */
  readersOf(id: string): MemoryRead[] {
    return this.#store.readsOf(id);
  }

  close(): void {
    this.#store.close();
  }

  /** Settling a decision the firewall asked for itself: it reports to the Gate or releases. */
  #self(id: DecisionId): Settle {
    return {
      done: async (r) => {
        await this.#rt.gate.recordResult(id, r);
      },
      refused: () => {
        this.#rt.gate.release(id);
      },
    };
  }

  /** Asks the Gate and redeems the ticket; a denial is ERR_MEMORY_DENIED with the Gate's reasons. */
  async #govern(
    caller: MemoryCaller,
    op: MemoryOp,
    parameters: Record<string, unknown>,
    taintLabels: readonly TaintLabel[] = [],
  ): Promise<
    | { ok: true; decisionId: DecisionId; parameters: Readonly<Record<string, unknown>>; taint: TaintLabel[] }
    | { ok: false; code: MemoryErrorCode; message: string; reasonCodes: string[]; decisionId?: string }
  > {
    const tool = MEMORY_TOOL_NAMES[op];
    const outcome: GateOutcome = await this.#rt.gate.authorize({
      principalId: caller.principalId,
      runId: caller.runId,
      toolClass: "memory",
      action: op,
      tool,
      parameters,
      taintLabels: [...taintLabels],
    });
    const ticket = ticketOf(outcome);
    const decisionId = outcome.decisionId ?? undefined;
    const denied = {
      ok: false as const,
      code: "ERR_MEMORY_DENIED" as const,
      reasonCodes: outcome.reasonCodes,
      ...(decisionId !== undefined ? { decisionId } : {}),
    };
    if (ticket === undefined || outcome.decisionId === null) {
      return { ...denied, message: `the Gate did not allow memory ${op}: ${outcome.reasonCodes.join(", ")}` };
    }
    const redeemed = redeemTicket(ticket, { tool, now: this.#rt.clock() });
    if (!redeemed.ok)
      return { ...denied, message: `ticket refused: ${redeemed.code}`, reasonCodes: [redeemed.code] };
    return {
      ok: true,
      decisionId: outcome.decisionId,
      parameters: redeemed.parameters,
      taint: mergeTaint(outcome.taint, taintLabels),
    };
  }

  /** Records the reads, reports content and taint to the Gate (so the session carries them), journals. */
  async #served(
    caller: MemoryCaller,
    { decisionId, settle }: { decisionId: DecisionId; settle: Settle },
    op: "read" | "search",
    records: readonly MemoryRecord[],
  ): Promise<TaintLabel[]> {
    const taint = mergeTaint(...records.map((r) => r.taint));
    if (records.length > 0) {
      this.#store.recordReads(
        records.map((r) => r.id),
        { runId: caller.runId, principalId: caller.principalId, at: this.#rt.clock() },
      );
    }
    const highest = records.reduce(
      (best, r) =>
        levelRank(this.config, r.classification) > levelRank(this.config, best) ? r.classification : best,
      this.config.classificationLevels[0] ?? "public",
    );
    await settle.done({
      taintLabels: taint,
      data: records.map((r) => r.content),
      classification: highest,
    });
    await this.#journal(caller.runId, MEMORY_READ, {
      principal_id: caller.principalId,
      decision_id: decisionId,
      op,
      memory_ids: records.map((r) => r.id),
      taint,
    });
    return taint;
  }

  /** Why `caller` may not have `r` (undefined: it may); see access.ts. */
  #refusal(caller: MemoryCaller, r: MemoryRecord): MemoryErrorCode | undefined {
    return refusalOf(this.config, caller, r, () => this.#lineage(caller.runId));
  }

  #visibility(caller: MemoryCaller): Visibility {
    const lineage = this.config.readScope === "lineage" ? this.#lineage(caller.runId) : undefined;
    return visibilityOf(this.config, caller, lineage);
  }

  /** The first run of a run's lineage (following parentRun while the store knows the parent). */
  #lineage(runId: string): string {
    let id = runId;
    for (let i = 0; i < 64; i++) {
      const parent = this.#rt.sessions.get(id)?.parentRun;
      if (parent === undefined) break;
      id = parent;
    }
    return id;
  }

  async #embed(text: string): Promise<number[] | null> {
    if (this.#embedder === undefined) return null;
    // The drift work's Embedder port (src/context): Float32Array vectors, stored as numbers.
    const [raw] = await this.#embedder.embed([text]);
    const v = raw === undefined ? [] : Array.from(raw);
    if (v.length === 0 || v.length > MAX_DIMENSIONS || !v.every(Number.isFinite)) return null;
    return v;
  }

  async #refused(
    caller: MemoryCaller,
    op: MemoryOp,
    code: MemoryErrorCode,
    extra: Record<string, unknown> = {},
  ) {
    await this.#journal(caller.runId, MEMORY_REFUSED, {
      principal_id: caller.principalId,
      op,
      code,
      ...extra,
    });
  }

  async #journal(runId: string, type: string, body: Record<string, unknown>): Promise<void> {
    await this.#rt.journal.append({ type, run_id: runId, body });
  }
}
