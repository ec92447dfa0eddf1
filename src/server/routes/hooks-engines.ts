// The per-host engine map of the AARTS HTTP transport, with an explicit bound. Each host
// principal gets one engine (its handshake and its sessions' protective state: taint,
// poisoned results, denials) on its first call. When `max` engines exist, a new principal is
// refused with ERR_HOOK_ENGINE_LIMIT (503) — never served by evicting another: an evicted
// engine would forget a poisoned session's taint, so a flood of credentials could wash out
// another host's constraints. An engine whose creation failed leaves the map at once.
import type { Engine } from "../../hooks/index.js";
import { ApiError } from "../errors.js";

export interface EngineRegistryOptions {
  max: number;
  create: (principal: string) => Promise<Engine>;
}

export class EngineRegistry {
  readonly #engines = new Map<string, Promise<Engine>>();

  constructor(private readonly options: EngineRegistryOptions) {
    if (!Number.isInteger(options.max) || options.max < 1) throw new RangeError("max must be >= 1");
  }

  /** Engines held (settled or being created). */
  get size(): number {
    return this.#engines.size;
  }

  has(principal: string): boolean {
    return this.#engines.has(principal);
  }

  /** The principal's engine; a new one only while fewer than `max` exist. */
  get(principal: string): Promise<Engine> {
    const known = this.#engines.get(principal);
    if (known !== undefined) return known;
    if (this.#engines.size >= this.options.max) {
      throw new ApiError(
        "ERR_HOOK_ENGINE_LIMIT",
        `the sidecar already serves ${this.options.max} hosts (hooks.maxEngines)`,
        { headers: { "Retry-After": "60" } },
      );
    }
    const created = this.options.create(principal);
    this.#engines.set(principal, created);
    created.catch(() => {
      if (this.#engines.get(principal) === created) this.#engines.delete(principal);
    });
    return created;
  }

  /** Closes every engine (they share the sidecar's runtime, which they do not close). */
  async close(): Promise<void> {
    const all = [...this.#engines.values()];
    this.#engines.clear();
    await Promise.allSettled(all.map(async (e) => (await e).close()));
  }
}
