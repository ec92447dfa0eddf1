// Provenance over the ECT DAG (APAE §Data Provenance): the DAG already encodes it (each
// ECT's `par` names the tasks whose outputs it consumed; inp_hash / out_hash prove what was
// processed without revealing it). Data-transforming actions MAY carry explicit claims
// (`apae.data_source`, `apae.data_classification`, `apae.retention_days`,
// `apae.transformations`); at Regulated they are required (`missingProvenance`). A query
// starts at an ECT (its jti) or at data (a hash an ECT consumed or produced) and walks the
// ancestors: which agents touched it, whether it was transformed, whether the chain is
// complete (every `par` resolves).
import { z } from "zod";
import type { EctClaims } from "./ect.js";

export const PROVENANCE_KEYS = [
  "apae.data_source",
  "apae.data_classification",
  "apae.retention_days",
  "apae.transformations",
] as const;

export const ProvenanceExtSchema = z.object({
  "apae.data_source": z.string().min(1).max(1024),
  "apae.data_classification": z.string().min(1).max(128),
  "apae.retention_days": z.number().int().min(0).max(36_500),
  "apae.transformations": z.array(z.string().min(1).max(128)).max(64),
});
export type ProvenanceExt = z.infer<typeof ProvenanceExtSchema>;

/** The provenance claims an ECT lacks or carries malformed (all four are required at Regulated). */
export function missingProvenance(claims: Pick<EctClaims, "ext">): string[] {
  const ext = claims.ext ?? {};
  const res = ProvenanceExtSchema.safeParse(ext);
  if (res.success) return [];
  return [...new Set(res.error.issues.map((i) => String(i.path[0])))].sort();
}

export interface ProvenanceNode {
  jti: string;
  iss: string;
  exec_act: string;
  iat: number;
  par: string[];
  inp_hash?: string;
  out_hash?: string;
  data_source?: string;
  data_classification?: string;
  transformations: string[];
}

export interface ProvenanceAnswer {
  query: string;
  /** How the query matched: an ECT's jti, or data by an ECT's inp_hash / out_hash. */
  matched: "ect" | "data" | "none";
  /** The ECTs the query starts at and all their ancestors, oldest first. */
  chain: ProvenanceNode[];
  /** Every agent (iss) in the chain, sorted. */
  agents: string[];
  transformed: boolean;
  /** True when every `par` in the chain resolves. */
  complete: boolean;
  /** `par` jtis that resolve to no ECT. */
  missing: string[];
  sources: string[];
}

function nodeOf(c: EctClaims): ProvenanceNode {
  const ext = c.ext ?? {};
  const t = ext["apae.transformations"];
  const src = ext["apae.data_source"];
  const cls = ext["apae.data_classification"];
  return {
    jti: c.jti,
    iss: c.iss,
    exec_act: c.exec_act,
    iat: c.iat,
    par: [...c.par],
    ...(c.inp_hash !== undefined ? { inp_hash: c.inp_hash } : {}),
    ...(c.out_hash !== undefined ? { out_hash: c.out_hash } : {}),
    ...(typeof src === "string" ? { data_source: src } : {}),
    ...(typeof cls === "string" ? { data_classification: cls } : {}),
    transformations: Array.isArray(t) ? t.filter((x): x is string => typeof x === "string") : [],
  };
}

/** Answers a provenance query over a set of ECTs (e.g. the L3 ledger's). */
export function provenanceOf(ects: Iterable<EctClaims>, query: string): ProvenanceAnswer {
  const byJti = new Map<string, ProvenanceNode>();
  for (const c of ects) byJti.set(c.jti, nodeOf(c));
  const all = [...byJti.values()];
  let start = byJti.has(query) ? [query] : [];
  const matched = start.length > 0 ? "ect" : undefined;
  if (matched === undefined) {
    start = all.filter((n) => n.out_hash === query || n.inp_hash === query).map((n) => n.jti);
  }
  const seen = new Set<string>();
  const missing = new Set<string>();
  const stack = [...start];
  while (stack.length > 0) {
    const jti = stack.pop() as string;
    if (seen.has(jti)) continue;
    const node = byJti.get(jti);
    if (node === undefined) {
      missing.add(jti);
      continue;
    }
    seen.add(jti);
    stack.push(...node.par);
  }
  const chain = [...seen]
    .map((j) => byJti.get(j) as ProvenanceNode)
    .sort((a, b) => a.iat - b.iat || (a.jti < b.jti ? -1 : 1));
  return {
    query,
    matched: matched ?? (start.length > 0 ? "data" : "none"),
    chain,
    agents: [...new Set(chain.map((n) => n.iss))].sort(),
    transformed: chain.some((n) => n.transformations.length > 0),
    complete: start.length > 0 && missing.size === 0,
    missing: [...missing].sort(),
    sources: [...new Set(chain.flatMap((n) => (n.data_source === undefined ? [] : [n.data_source])))].sort(),
  };
}
