// Search tools (Grep, Glob) walk a tree: what they may reach is decided from the search root
// and the glob, matched with minimatch against the credential locations
// (docs/hooks-files.md "Search tools"). Refused when
//   - the root is a credential location or lies inside one;
//   - a credential location or Warden's state lies under the root and the glob can reach it
//     (a Grep with no glob reaches everything under its root);
//   - the glob names a credential location wherever it lies (`**/.ssh/*`, `**/.env`,
//     `.aws/**`, `**/id_*`): it matches a probe path of that location but not the same
//     path with the location's segments replaced by a neutral name — `**/*.ts` or `*` match
//     both, so they are generic, not aimed at credentials.
import { relative } from "node:path";
import { braceExpand, Minimatch } from "minimatch";
import { type CodingProfile, HOME_CREDENTIALS, isWithin } from "./coding-profile.js";
import { absoluteOf, anyCredential, type FileWhere, physical, placeFile } from "./file-place.js";

/** Credential file names that may lie anywhere (coding-profile.ts isCredentialName). */
const NAME_PROBES = [".env", ".env.local", ".env.production", "id_rsa", "id_ed25519", "id_ecdsa", "id_dsa"];
const FILE_PROBES = ["", "/f", "/id_ed25519", "/credentials", "/key.pem"];
const PREFIXES = ["", "a/", "a/b/"];
const MAGIC = /[*?[\]{}()!+@]/;
const MAX_ALTERNATIVES = 64;

const neutral = (seg: string) => (seg.startsWith(".") ? ".zz-warden-neutral" : "zz-warden-neutral");

interface Probe {
  hit: string;
  control: string;
}

function buildProbes(): Probe[] {
  const out: Probe[] = [];
  for (const prefix of PREFIXES) {
    for (const loc of HOME_CREDENTIALS) {
      const ctl = loc.split("/").map(neutral).join("/");
      for (const f of FILE_PROBES) out.push({ hit: `${prefix}${loc}${f}`, control: `${prefix}${ctl}${f}` });
    }
    for (const n of NAME_PROBES) out.push({ hit: `${prefix}${n}`, control: `${prefix}${neutral(n)}` });
  }
  return out;
}
const PROBES = buildProbes();

const matchers = new Map<string, Minimatch>();
const targets = new Map<string, boolean>();

/** A compiled glob, kept for the next call (a long-lived engine sees the same globs again). */
function matcher(glob: string): Minimatch {
  let m = matchers.get(glob);
  if (m === undefined) {
    m = new Minimatch(glob, {
      dot: true,
      nocase: process.platform !== "linux",
      braceExpandMax: MAX_ALTERNATIVES + 1,
    });
    if (matchers.size >= 256) matchers.clear();
    matchers.set(glob, m);
  }
  return m;
}

/** Whether the glob is aimed at a credential location or name, wherever the search starts. */
export function globTargetsCredential(glob: string): boolean {
  const known = targets.get(glob);
  if (known !== undefined) return known;
  const m = matcher(glob);
  const aimed = PROBES.some((p) => m.match(p.hit) && !m.match(p.control));
  if (targets.size >= 256) targets.clear();
  targets.set(glob, aimed);
  return aimed;
}

/** Whether the glob can reach `rel` (a location below the root) or anything inside it. */
function reaches(glob: string | undefined, rel: string): boolean {
  if (glob === undefined) return true;
  const m = matcher(glob);
  return m.match(rel) || m.match(rel, true);
}

/** A glob whose leading literal segments (absolute, `~`, `..`) move the root: split off. */
export function splitGlob(
  pattern: string,
  root: string,
  where: FileWhere,
): { root: string; glob: string | undefined } | { unresolved: string } {
  const segs = pattern.split("/");
  const first = segs.findIndex((s) => MAGIC.test(s));
  const lit = first === -1 ? segs : segs.slice(0, first);
  const rest = first === -1 ? [] : segs.slice(first);
  if (rest.includes("..")) return { unresolved: "`..` after a wildcard in the glob" };
  if (new Minimatch(pattern).set.some((s) => s.some((x) => x === ".."))) {
    return { unresolved: "`..` inside a glob alternative" };
  }
  const literal = pattern.startsWith("/") && lit.join("/") === "" ? "/" : lit.join("/");
  const base =
    literal === ""
      ? root
      : /^(~|\/)/.test(literal)
        ? absoluteOf(literal, where)
        : absoluteOf(`${root}/${literal}`, where);
  if (typeof base !== "string") return base;
  return { root: base, glob: rest.length === 0 ? undefined : rest.join("/") };
}

export type SearchCheck = { reaches: false } | { reaches: true; why: string };

function rootReaches(
  profiles: readonly CodingProfile[],
  roots: readonly string[],
  glob: string | undefined,
): string | undefined {
  for (const pr of profiles) {
    for (const loc of [...pr.credentials, ...pr.stateDirs]) {
      for (const r of roots) {
        if (isWithin(r, loc)) return `the search root lies in ${loc}`;
        if (isWithin(loc, r) && reaches(glob, relative(r, loc))) return `the search can reach ${loc}`;
      }
    }
  }
  return undefined;
}

/** One search: its roots (already placed) and its glob relative to them. */
function checkOne(
  profiles: readonly CodingProfile[],
  roots: readonly string[],
  glob: string | undefined,
): SearchCheck {
  if (anyCredential(profiles, roots))
    return { reaches: true, why: "the search root is a credential location" };
  const why = rootReaches(profiles, roots, glob);
  if (why !== undefined) return { reaches: true, why };
  if (glob !== undefined && globTargetsCredential(glob))
    return { reaches: true, why: `the glob ${glob.slice(0, 128)} names a credential location` };
  return { reaches: false };
}

/**
 * Grep and Glob: `path` (default the workspace) and the glob (Glob's `pattern`, Grep's
 * `glob`). A Glob pattern's brace alternatives are searches of their own (`{/etc/x,~/.ssh/*}`
 * is two roots). Fails closed on what cannot be placed.
 */
export function checkSearch(
  input: { path: string | undefined; glob: string | undefined; isGlobTool: boolean },
  where: FileWhere,
  profiles: readonly CodingProfile[],
): SearchCheck {
  const start = placeFile(input.path ?? where.workspace ?? process.cwd(), where);
  if (!start.ok) return { reaches: true, why: start.unresolved };
  // Bounded expansion: a glob of more alternatives is refused, never matched in part.
  const alternatives =
    input.glob === undefined ? [] : braceExpand(input.glob, { braceExpandMax: MAX_ALTERNATIVES + 1 });
  if (alternatives.length > MAX_ALTERNATIVES)
    return { reaches: true, why: `the glob expands to over ${MAX_ALTERNATIVES} alternatives` };
  if (!input.isGlobTool || input.glob === undefined) return checkOne(profiles, start.places, input.glob);
  for (const alt of alternatives) {
    const roots: string[] = [];
    let glob: string | undefined;
    for (const r of start.places) {
      const p = splitGlob(alt, r, where);
      if ("unresolved" in p) return { reaches: true, why: p.unresolved };
      roots.push(p.root, physical(p.root));
      glob = p.glob;
    }
    const c = checkOne(profiles, roots, glob);
    if (c.reaches) return c;
    if (glob !== alt && globTargetsCredential(alt))
      return { reaches: true, why: `the glob ${alt.slice(0, 128)} names a credential location` };
  }
  return { reaches: false };
}
