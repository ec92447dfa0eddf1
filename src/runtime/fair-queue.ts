// Per-principal fair scheduling of shared work (issue 37, floods). The work every
// principal shares — a Gate decision with its durable journal commit, an upstream MCP
// call — is served through one queue per principal, the queues served round-robin, at
// most `concurrency` calls at once in all. While several principals are active (served,
// waiting, or served within `recentMs`), each may hold at most its equal share of the
// slots (ceil(concurrency / active)), so a principal flooding a hundred requests gets the
// same service as one sending them one at a time, and a principal that was idle is served
// before the backlogged ones' next calls (start-time fair queuing). Bounds: a principal's
// calls admitted (served + waiting) are capped (`maxPerPrincipal`), and so are the calls
// waiting in all (`maxQueued`, the memory bound); when that fills, the newest call of the
// longest queue is refused, never a call of a principal holding less. The key is the
// authenticated principal (never a client-chosen name), so many sessions share one share.
// A call still running after `sliceMs` gives its slot back and runs on outside the count:
// the shared work takes milliseconds, so such a call is waiting on something no one else
// needs (a human approval, a slow upstream tool) and must not hold the others up.

export interface FairQueueOptions {
  /** Calls served at once, all principals together. */
  readonly concurrency: number;
  /** One principal's calls admitted at once (served + waiting); beyond it: `principal_full`. */
  readonly maxPerPrincipal: number;
  /** Calls waiting, all principals together (the memory bound); beyond it the longest queue sheds. */
  readonly maxQueued: number;
  /** A principal served this recently still counts as active when shares are computed (default 1000). */
  readonly recentMs?: number;
  /** A call running this long gives its slot back (default 1000; 0 never). */
  readonly sliceMs?: number;
  readonly now?: () => number;
}

/** Why a call was not served: its principal's share is full, the shared queue shed it, or its client left. */
export type FairRefusal = "principal_full" | "queue_full" | "aborted";

export type FairOutcome<T> = { ok: true; value: T } | { ok: false; reason: FairRefusal };

interface Waiter {
  readonly start: () => void;
  readonly refuse: (why: FairRefusal) => void;
}

interface Lane {
  active: number;
  readonly waiting: Waiter[];
  lastSeen: number;
}

export class FairQueue {
  readonly #o: Required<FairQueueOptions>;
  readonly #lanes = new Map<string, Lane>();
  /** Principals with calls waiting, in service order: an idle principal's first call goes to `#fresh`. */
  readonly #fresh = new Set<string>();
  readonly #ring = new Set<string>();
  #active = 0;
  #queued = 0;

  constructor(options: FairQueueOptions) {
    this.#o = { recentMs: 1000, sliceMs: 1000, now: () => Date.now(), ...options };
    if (this.#o.concurrency < 1 || this.#o.maxPerPrincipal < 1 || this.#o.maxQueued < 0)
      throw new RangeError("FairQueue: concurrency and maxPerPrincipal must be ≥ 1, maxQueued ≥ 0");
  }

  /** Calls being served now, and waiting, in all. */
  get active(): number {
    return this.#active;
  }
  get queued(): number {
    return this.#queued;
  }

  /** One principal's calls being served and waiting. */
  of(principal: string): { active: number; queued: number } {
    const lane = this.#lanes.get(principal);
    return { active: lane?.active ?? 0, queued: lane?.waiting.length ?? 0 };
  }

  /**
   * Runs `work` when `principal`'s turn comes; refused without running it when the
   * principal's share of admissions is full, when the shared queue shed it, or when
   * `signal` aborts while it waits (a call already started is not interrupted). `sliceMs`
   * overrides the queue's slice for this call. `signal` may be given as a function: it is
   * called only when the call has to wait (a call served at once needs no abort signal,
   * and building one — a controller, a listener, `AbortSignal.any` — was a measurable
   * share of an uncontended decision).
   */
  async run<T>(
    principal: string,
    work: () => Promise<T>,
    signal?: AbortSignal | (() => AbortSignal),
    sliceMs = this.#o.sliceMs,
  ): Promise<FairOutcome<T>> {
    const admitted = this.#admit(principal, signal);
    const refused = admitted instanceof Promise ? await admitted : admitted;
    if (refused !== undefined) return { ok: false, reason: refused };
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      this.#finish(principal);
    };
    const slice = sliceMs > 0 ? setTimeout(release, sliceMs) : undefined;
    slice?.unref();
    try {
      return { ok: true, value: await work() };
    } finally {
      clearTimeout(slice);
      release();
    }
  }

  #lane(principal: string): Lane {
    let lane = this.#lanes.get(principal);
    if (lane === undefined) {
      lane = { active: 0, waiting: [], lastSeen: this.#o.now() };
      this.#lanes.set(principal, lane);
    }
    return lane;
  }

  /**
   * Admits a call: `undefined` when it starts now, a refusal, or a promise of either when
   * it waits. Uncontended (nobody waiting, a slot free, the principal below its share) the
   * call starts at once, exactly as `#pump` would start it as the only waiter.
   */
  #admit(
    principal: string,
    given: AbortSignal | (() => AbortSignal) | undefined,
  ): FairRefusal | undefined | Promise<FairRefusal | undefined> {
    if (typeof given !== "function" && given?.aborted) return "aborted";
    const lane = this.#lane(principal);
    const idle = lane.active === 0 && lane.waiting.length === 0;
    if (lane.active + lane.waiting.length >= this.#o.maxPerPrincipal) return "principal_full";
    if (this.#queued === 0 && this.#active < this.#o.concurrency && lane.active < this.#share()) {
      this.#start(lane);
      return undefined;
    }
    if (this.#queued >= this.#o.maxQueued && !this.#shed(lane)) return "queue_full";
    const signal = typeof given === "function" ? given() : given;
    if (signal?.aborted) return "aborted";
    return new Promise<FairRefusal | undefined>((resolve) => {
      const onAbort = () => {
        const i = lane.waiting.indexOf(waiter);
        if (i < 0) return;
        lane.waiting.splice(i, 1);
        this.#queued--;
        this.#unlist(principal, lane);
        resolve("aborted");
      };
      const waiter: Waiter = {
        start: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve(undefined);
        },
        refuse: (why) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(why);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      lane.waiting.push(waiter);
      this.#queued++;
      if (!this.#ring.has(principal)) (idle ? this.#fresh : this.#ring).add(principal);
      this.#pump();
    });
  }

  /** The shared queue is full: the newest call of the longest queue gives way, unless `lane`'s is as long. */
  #shed(lane: Lane): boolean {
    let longest: [string, Lane] | undefined;
    for (const entry of this.#lanes)
      if (longest === undefined || entry[1].waiting.length > longest[1].waiting.length) longest = entry;
    if (longest === undefined || longest[1].waiting.length <= lane.waiting.length + 1) return false;
    const victim = longest[1].waiting.pop();
    this.#queued--;
    this.#unlist(longest[0], longest[1]);
    victim?.refuse("queue_full");
    return true;
  }

  #unlist(principal: string, lane: Lane): void {
    if (lane.waiting.length > 0) return;
    this.#fresh.delete(principal);
    this.#ring.delete(principal);
  }

  /** Equal share of the slots among principals active now or served within `recentMs`. */
  #share(): number {
    const now = this.#o.now();
    let n = 0;
    for (const [p, lane] of this.#lanes) {
      if (lane.active > 0 || lane.waiting.length > 0 || now - lane.lastSeen < this.#o.recentMs) n++;
      else this.#lanes.delete(p);
    }
    return Math.max(1, Math.ceil(this.#o.concurrency / Math.max(1, n)));
  }

  #pump(): void {
    while (this.#active < this.#o.concurrency && this.#queued > 0) {
      const share = this.#share();
      const next = this.#next(this.#fresh, share) ?? this.#next(this.#ring, share);
      if (next === undefined) return;
      const lane = this.#lanes.get(next);
      const waiter = lane?.waiting.shift();
      if (lane === undefined || waiter === undefined) return;
      this.#queued--;
      this.#fresh.delete(next);
      this.#ring.delete(next);
      if (lane.waiting.length > 0) this.#ring.add(next); // to the back of the round
      this.#start(lane);
      waiter.start();
    }
  }

  /** Takes a slot for a call of `lane`. */
  #start(lane: Lane): void {
    lane.active++;
    lane.lastSeen = this.#o.now();
    this.#active++;
  }

  /** The first principal in `order` below its share. */
  #next(order: Set<string>, share: number): string | undefined {
    for (const p of order) if ((this.#lanes.get(p)?.active ?? 0) < share) return p;
    return undefined;
  }

  #finish(principal: string): void {
    const lane = this.#lanes.get(principal);
    if (lane !== undefined) {
      lane.active--;
      lane.lastSeen = this.#o.now();
    }
    this.#active--;
    this.#pump();
  }
}
