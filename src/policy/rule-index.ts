// The YAML rules indexed by tool, action and tool class, so a call walks only the rules
// that can apply to it and the cost stops growing with the rule count. Each rule sits in
// exactly one bucket, chosen from its most specific exact-name fields (tool, else the
// toolClass × action pairs, else action, else toolClass); rules naming none of them sit
// in an always-checked bucket. A call's
// candidates are the union of its buckets in the original rule order, so first-match
// semantics are those of the linear walk: the index only skips rules whose own
// conditions would reject the call (every rule still checks all its fields). The merged
// list is cached per (toolClass, action, tool) with names no rule mentions folded into
// one entry, and the cache is bounded by the number of rule references it holds.

/** The names a rule is indexed under; undefined puts it in the always-checked bucket. */
export type IndexKey =
  | { dim: "tool" | "action" | "toolClass"; names: readonly string[] }
  | { dim: "classAction"; classes: readonly string[]; actions: readonly string[] }
  | undefined;

/** Upper bound on rule references held by cached candidate lists (≈ 8 MB of pointers). */
export const MAX_CACHED_REFS = 1_000_000;

type Cache<R> = Map<string, Map<string, Map<string, readonly R[]>>>;

export class RuleIndex<R> {
  private readonly byTool = new Map<string, number[]>();
  private readonly byAction = new Map<string, number[]>();
  private readonly byClass = new Map<string, number[]>();
  /** Keyed `toolClass action` (a space never occurs in a name). */
  private readonly byPair = new Map<string, number[]>();
  private readonly knownClasses = new Set<string>();
  private readonly knownActions = new Set<string>();
  private readonly always: number[] = [];
  private readonly cache: Cache<R> = new Map();
  private cachedRefs = 0;

  constructor(
    private readonly rules: readonly R[],
    keyOf: (rule: R) => IndexKey,
  ) {
    const dims = { tool: this.byTool, action: this.byAction, toolClass: this.byClass };
    const file = (map: Map<string, number[]>, name: string, pos: number) => {
      const bucket = map.get(name);
      if (bucket === undefined) map.set(name, [pos]);
      else if (bucket.at(-1) !== pos) bucket.push(pos);
    };
    for (const [pos, rule] of rules.entries()) {
      const key = keyOf(rule);
      if (key === undefined) {
        this.always.push(pos);
      } else if (key.dim === "classAction") {
        for (const c of key.classes) {
          this.knownClasses.add(c);
          for (const a of key.actions) {
            this.knownActions.add(a);
            file(this.byPair, `${c} ${a}`, pos);
          }
        }
      } else {
        for (const name of key.names) file(dims[key.dim], name, pos);
      }
    }
    for (const c of this.byClass.keys()) this.knownClasses.add(c);
    for (const a of this.byAction.keys()) this.knownActions.add(a);
  }

  /**
   * The last lookup, answered again without the map walk when a call repeats the names of
   * the one before (an agent calling one tool in a loop). One entry, keyed by all three
   * names exactly, holding what the cache holds for them: nothing a caller chooses can put
   * another list there.
   */
  private last:
    | { toolClass: string; action: string; tool: string | undefined; rules: readonly R[] }
    | undefined;

  /** The rules that can match a call with these names, in rule order. */
  candidates(toolClass: string, action: string, tool: string | undefined): readonly R[] {
    const last = this.last;
    if (last !== undefined && last.toolClass === toolClass && last.action === action && last.tool === tool)
      return last.rules;
    const rules = this.lookup(toolClass, action, tool);
    this.last = { toolClass, action, tool, rules };
    return rules;
  }

  private lookup(toolClass: string, action: string, tool: string | undefined): readonly R[] {
    // Names no rule is indexed under select nothing beyond the always bucket: fold them to "".
    const c = this.knownClasses.has(toolClass) ? toolClass : "";
    const a = this.knownActions.has(action) ? action : "";
    const t = tool !== undefined && this.byTool.has(tool) ? tool : "";
    const hit = this.cache.get(c)?.get(a)?.get(t);
    if (hit !== undefined) return hit;
    const merged = this.merge(c, a, t);
    if (this.cachedRefs + merged.length <= MAX_CACHED_REFS) {
      this.cachedRefs += merged.length;
      const byAction = this.cache.get(c) ?? new Map<string, Map<string, readonly R[]>>();
      this.cache.set(c, byAction);
      const byTool = byAction.get(a) ?? new Map<string, readonly R[]>();
      byAction.set(a, byTool);
      byTool.set(t, merged);
    }
    return merged;
  }

  private merge(toolClass: string, action: string, tool: string): readonly R[] {
    const positions = [
      ...this.always,
      ...(this.byClass.get(toolClass) ?? []),
      ...(this.byAction.get(action) ?? []),
      ...(this.byTool.get(tool) ?? []),
      ...(this.byPair.get(`${toolClass} ${action}`) ?? []),
    ];
    // Each rule is in one bucket and a call has one name per field: no duplicates to remove.
    positions.sort((x, y) => x - y);
    return positions.map((p) => this.rules[p]!);
  }
}
