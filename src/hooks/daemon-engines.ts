// The hook daemon's engines: one per (host, workspace), all over ONE composed runtime (the
// first engine's: one journal, one policy) and ONE in-memory state that every engine shares
// and the daemon persists to the state file the one-shot `warden hooks <host>` uses.
// The state file stays the meeting point of every writer (this daemon, one-shot processes):
//   before an event  the file's stamp is compared with the one this daemon last wrote or
//                    read; if another process wrote since, its state is merged in (a union:
//                    protective state only grows — mergeState);
//   after an event   the state is saved under the file lock (merge with the file, atomic
//                    replace) and the merged result adopted, before the answer is sent.
// Adoption is in place (session objects keep their identity), so an event still being
// evaluated never writes into a session object the daemon has dropped: no flag is lost.
// The source pin store is shared the same way: one instance per file for every engine.
import { dirname, resolve } from "node:path";
import { HookError, parseStrictJson, WardenError } from "../contracts/index.js";
import { PinStore } from "../tools/index.js";
import type { DaemonHost } from "./daemon-hosts.js";
import { createEngine, type Engine, type EngineConfig } from "./engine.js";
import { failureVerdict } from "./failure.js";
import { type HostAnswer, isObject } from "./host-adapter-common.js";
import { AARTS_VERSION, type Verdict } from "./schema-base.js";
import { type EngineState, loadState, mergeState, saveStateStamped, stateStamp } from "./state.js";

/** Distinct (host, workspace) engines one daemon holds; a further one is refused (fail closed). */
export const MAX_DAEMON_ENGINES = 64;

export interface EnginePoolOptions {
  statePath: string;
  /** The engine configuration of one host and workspace (journal, policy, failure policy). */
  configFor(hostId: string, workspace: string | undefined): Promise<EngineConfig> | EngineConfig;
}

/** Copies `from` into `into` keeping every existing session object (and `into` itself). */
function adopt(into: EngineState, from: EngineState): void {
  for (const [id, s] of Object.entries(from.sessions)) {
    const mine = into.sessions[id];
    if (mine === undefined) into.sessions[id] = s;
    else Object.assign(mine, s);
  }
  for (const id of Object.keys(into.sessions)) if (!(id in from.sessions)) delete into.sessions[id];
  Object.assign(into.memory, from.memory);
  into.asks.splice(0, into.asks.length, ...from.asks);
}

const failed = (code: string, message: string): Verdict =>
  failureVerdict(undefined, undefined, { open: 0 }, code, message);

export class EnginePool {
  readonly #engines = new Map<string, Promise<Engine>>();
  readonly #state: EngineState;
  #stamp: string | undefined;
  #owner: Promise<Engine> | undefined;
  readonly #pins = new Map<string, PinStore>();

  private constructor(private readonly options: EnginePoolOptions) {
    // An unreadable state file refuses the daemon's start (loadState throws), as it does a one-shot.
    this.#state = loadState(options.statePath);
    this.#stamp = stateStamp(options.statePath);
  }

  static open(options: EnginePoolOptions): EnginePool {
    return new EnginePool(options);
  }

  get size(): number {
    return this.#engines.size;
  }

  /**
   * One pin store per file for every engine: a store saves its whole view, so two instances
   * of one file would each drop the other's new pins (and a dropped pin is a first use again).
   */
  #pinStore(pins: EngineConfig["sourcePins"]): EngineConfig["sourcePins"] {
    if (typeof pins !== "string") return pins;
    let store = this.#pins.get(pins);
    if (store === undefined) {
      store = PinStore.open(pins);
      this.#pins.set(pins, store);
    }
    return store;
  }

  async #create(hostId: string, workspace: string | undefined, owner?: Engine): Promise<Engine> {
    const { statePath: _saved, sourcePins, ...config } = await this.options.configFor(hostId, workspace);
    const pins = this.#pinStore(sourcePins);
    const shared = {
      // The state directory: Warden's own (never readable by file tools), and its ask key.
      stateDir: dirname(this.options.statePath),
      ...(owner !== undefined ? { runtime: owner.runtime } : {}),
      ...(pins !== undefined ? { sourcePins: pins } : {}),
    };
    const engine = await createEngine({ ...config, ...shared, state: this.#state });
    // One handshake for the engine's life (the one-shot journals one per event).
    await engine.versionCheck({ aarts_version: AARTS_VERSION });
    return engine;
  }

  /** The engine of (host, workspace); the first one created owns the runtime the others share. */
  #engine(hostId: string, workspace: string | undefined): Promise<Engine> {
    const key = `${hostId}\u0000${workspace ?? ""}`;
    const known = this.#engines.get(key);
    if (known !== undefined) return known;
    if (this.#engines.size >= MAX_DAEMON_ENGINES) {
      const why = `the hook daemon already holds ${MAX_DAEMON_ENGINES} engines (one per host and workspace)`;
      return Promise.reject(new HookError("ERR_HOOK_ENGINE_LIMIT", why));
    }
    const owner = this.#owner;
    const created =
      owner === undefined
        ? this.#create(hostId, workspace)
        : owner.then((o) => this.#create(hostId, workspace, o));
    if (owner === undefined) this.#owner = created;
    this.#engines.set(key, created);
    created.catch(() => {
      if (this.#engines.get(key) === created) this.#engines.delete(key);
      if (this.#owner === created) this.#owner = undefined;
    });
    return created;
  }

  /**
   * Merges in what another process wrote since this daemon last read or wrote the file. A
   * merge, not a replacement: a session an event in flight has just created is not on disk yet.
   */
  #refresh(): void {
    const now = stateStamp(this.options.statePath);
    if (now === this.#stamp) return;
    adopt(this.#state, mergeState(loadState(this.options.statePath), this.#state));
    this.#stamp = now;
  }

  #save(): void {
    const { merged, stamp } = saveStateStamped(this.options.statePath, this.#state, this.#stamp);
    adopt(this.#state, merged);
    this.#stamp = stamp;
  }

  /**
   * One host event (its raw JSON text) → the host's answer. The verdict is journaled
   * (durable) by the engine and the state saved before this resolves; any fault is a
   * fail-closed answer in the host's format, never a throw.
   */
  async answer(host: DaemonHost, workspace: string | undefined, text: string): Promise<HostAnswer> {
    const adapter = host.adapter;
    let input: unknown;
    try {
      input = parseStrictJson(text);
    } catch {
      input = text;
    }
    const event = adapter.eventName(input);
    const ws = workspace ?? (isObject(input) ? adapter.workspaceOf(input) : undefined);
    let verdict: Verdict;
    try {
      const engine = await this.#engine(adapter.hostId, ws !== undefined ? resolve(ws) : undefined);
      this.#refresh();
      const now = new Date().toISOString();
      verdict = await engine.handle(isObject(input) ? adapter.translate(input, now) : input);
      this.#save();
    } catch (err) {
      const why = err instanceof Error ? err.message.slice(0, 500) : "fault";
      const code =
        err instanceof WardenError && err.code.startsWith("ERR_HOOK_") ? err.code : "ERR_HOOK_ENGINE_FAULT";
      verdict = failed(code, `the hook daemon could not answer: ${why}`);
    }
    return adapter.render(event, verdict);
  }

  async close(): Promise<void> {
    const all = await Promise.allSettled([...this.#engines.values()]);
    const owner = await this.#owner?.catch(() => undefined);
    this.#engines.clear();
    this.#owner = undefined;
    const engines = all.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    // The owner closes the shared runtime: last.
    for (const e of engines) if (e !== owner) await e.close();
    await owner?.close();
  }
}
