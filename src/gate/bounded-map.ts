// A Map that keeps at most `max` entries, evicting the oldest insertion first. The
// Gate keeps admitted calls for recordResult in one; results that are never reported
// must not accumulate. Why not `map.keys().next()` to find the oldest: V8 leaves
// deleted slots at the front of a Map's table until it rehashes, so that call skips
// every hole and costs O(max) per insertion once the map is full (≈ 9 µs at 10 000).
// Here insertion order is a plain array with a moving head: O(1) amortized.

export class BoundedMap<K, V> {
  /** Value and the insertion number that placed the key in #order. */
  readonly #map = new Map<K, { value: V; n: number }>();
  readonly #max: number;
  /**
   * Insertions from #head on, oldest first. An insertion whose key was deleted (or
   * deleted and set again, which is a newer insertion) is stale and skipped.
   */
  #order: { key: K; n: number }[] = [];
  #head = 0;
  #n = 0;

  constructor(
    max: number,
    /** Told of each key evicted to make room (not of keys deleted by the caller). */
    readonly onEvict?: (key: K) => void,
  ) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError("BoundedMap: max must be a positive integer");
    this.#max = max;
  }

  get size(): number {
    return this.#map.size;
  }

  get(key: K): V | undefined {
    return this.#map.get(key)?.value;
  }

  has(key: K): boolean {
    return this.#map.has(key);
  }

  delete(key: K): boolean {
    return this.#map.delete(key);
  }

  /** Inserts a new key (a key already present keeps its place and gets the new value). */
  set(key: K, value: V): void {
    const had = this.#map.get(key);
    if (had !== undefined) {
      had.value = value;
      return;
    }
    const n = this.#n++;
    this.#map.set(key, { value, n });
    this.#order.push({ key, n });
    while (this.#map.size > this.#max && this.#head < this.#order.length) {
      const o = this.#order[this.#head++]!;
      if (this.#map.get(o.key)?.n === o.n) {
        this.#map.delete(o.key);
        this.onEvict?.(o.key);
      }
    }
    this.#compact();
  }

  /** Drops consumed and deleted keys from the order so it stays O(max) in memory. */
  #compact(): void {
    const live = this.#order.length - this.#head;
    if (this.#head > 1024 && this.#head >= live) {
      this.#order = this.#order.slice(this.#head);
      this.#head = 0;
    }
    if (this.#order.length - this.#head > 2 * this.#max + 1024) {
      this.#order = this.#order.slice(this.#head).filter((o) => this.#map.get(o.key)?.n === o.n);
      this.#head = 0;
    }
  }
}
