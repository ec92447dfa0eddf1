// The extension point for tools the gateway serves itself beside the upstream ones (the
// memory firewall's memory tools, for example). A provider declares its tools as Warden
// contracts with the tool class and action the Gate should see; the gateway lists them
// under the same visibility rule, authorizes every call through the Gate, hands the
// provider only a granted ticket, and records the result (taint, journal) itself.
import type { Sha256Hash, TaintLabel } from "../contracts/index.js";
import type { ExecutionTicket } from "../gate/index.js";
import type { CompiledTool, ToolClassification } from "../tools/index.js";

export interface LocalTool {
  /** The contract: its name is the name clients see (it must not contain `__`). */
  tool: CompiledTool;
  classification: ToolClassification;
  /** The JSON Schema shown to clients (default: derived from the contract's arguments). */
  inputSchema?: Record<string, unknown>;
}

export type LocalToolResult =
  | {
      ok: true;
      output: unknown;
      taint: TaintLabel[];
      outputHash?: Sha256Hash;
      /** The output's classification level for the Gate (default: the Gate's default). */
      classification?: string;
    }
  | { ok: false; code: string; message: string };

export interface LocalToolProvider {
  /** A short name for logs and errors (e.g. `memory`). */
  readonly name: string;
  tools(): readonly LocalTool[];
  /**
   * Runs a call the Gate granted (the ticket is single-use and bound to the call); `taint`
   * is the decision's effective taint (what the call's inputs carry). The provider must not
   * ask the Gate again, nor record the result: the gateway does both.
   */
  execute(
    ticket: ExecutionTicket,
    tool: CompiledTool,
    options: { signal: AbortSignal; principalId: string; runId: string; taint: readonly TaintLabel[] },
  ): Promise<LocalToolResult>;
  /** Called once when the gateway closes. */
  close?(): void | Promise<void>;
}
