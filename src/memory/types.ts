// The memory firewall's public types: who calls, what an operation answers, what a write
// takes, and the runtime ports the firewall needs.

import type { Embedder } from "../context/index.js";
import type { ERROR_CODES, TaintLabel } from "../contracts/index.js";
import type { ReportedResult } from "../gate/index.js";
import type { Runtime } from "../runtime/index.js";

export type MemoryErrorCode = (typeof ERROR_CODES.memory)[number];

/** Who is asking: the authenticated principal and a run the runtime started for it. */
export interface MemoryCaller {
  principalId: string;
  runId: string;
}

/** A caller whose operation a host already had the Gate grant (`MemoryFirewall.granted`). */
export interface GrantedCaller extends MemoryCaller {
  /** The decision's effective taint (what a write keeps with the memory). */
  taint: readonly TaintLabel[];
}

/** A granted operation's answer; on success `report` is what the host records with the Gate. */
export type GrantedResult =
  | { ok: true; value: unknown; taint: TaintLabel[]; decisionId: string; report: ReportedResult }
  | { ok: false; code: MemoryErrorCode; message: string; reasonCodes?: string[]; decisionId?: string };

export interface MemoryItem {
  id: string;
  content: string;
  classification: string;
  scope: "private" | "shared";
  taint: TaintLabel[];
  createdAt: string;
  score?: number;
}

export type MemoryResult<T> =
  | { ok: true; value: T; taint: TaintLabel[]; decisionId: string }
  | { ok: false; code: MemoryErrorCode; message: string; reasonCodes?: string[]; decisionId?: string };

export interface WriteInput {
  content: string;
  classification: string;
  scope?: "private" | "shared";
  /** Labels the caller declares for the content (merged with the Gate's effective taint). */
  taintLabels?: readonly TaintLabel[];
}

/** The runtime ports the firewall uses (a composed Runtime has them all). */
export type MemoryRuntime = Pick<Runtime, "gate" | "journal" | "sessions" | "clock">;

export interface MemoryFirewallOptions {
  embedder?: Embedder;
}
