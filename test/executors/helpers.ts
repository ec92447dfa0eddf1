// Test helpers for executors: mint tickets the way the Gate does and capture journal appends.
import { uuidv7 } from "../../src/contracts/index.js";
import { type ExecutorJournal, registerExecutorEventTypes } from "../../src/executors/index.js";
import { ExecutionTicket } from "../../src/gate/ticket.js";

export function mint(
  tool: string,
  parameters: Record<string, unknown>,
  extra: { toolClass?: string; action?: string; ttlMs?: number } = {},
): ExecutionTicket {
  return ExecutionTicket.mint({
    decisionId: uuidv7(),
    runId: "run-test-1",
    principalId: "agent:tester",
    toolClass: extra.toolClass ?? "http",
    action: extra.action ?? "call",
    tool,
    parameters,
    ...(extra.ttlMs !== undefined ? { ttlMs: extra.ttlMs } : {}),
  });
}

export interface Appended {
  type: string;
  run_id: string;
  trace_id?: string;
  body: Record<string, unknown>;
}

/** A journal that keeps appends in memory and checks each body against the executor event schemas. */
export class MemoryJournal implements ExecutorJournal {
  readonly events: Appended[] = [];
  readonly #schemas = new Map<string, { parse(v: unknown): unknown }>();

  constructor() {
    registerExecutorEventTypes({
      has: (t) => this.#schemas.has(t),
      register: (t, s) => {
        this.#schemas.set(t, s);
      },
    });
  }

  append(event: Appended): void {
    this.#schemas.get(event.type)?.parse(event.body);
    this.events.push(event);
  }

  ofType(type: string): Appended[] {
    return this.events.filter((e) => e.type === type);
  }
}
