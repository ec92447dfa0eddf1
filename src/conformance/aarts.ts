// AARTS conformance levels 1–3 (§11) through the existing `warden hooks conformance` driver:
// in library mode against Warden's own engine in process (its journal in a scratch
// directory), in URL mode against the sidecar's HTTP hook transport with a host-role token.
// The driver runs once at level 3 and each level's row judges the checks that level
// requires; a failing level names the failed checks.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateKeyPair } from "../crypto/index.js";
import {
  type ConformanceReport,
  type ConformanceRow,
  createEngine,
  type EngineTransport,
  HOOK_POINTS,
  HOOK_TABLE,
  httpTransport,
  inProcessTransport,
  LEVEL_TOOLS,
  type Level,
  runConformance,
} from "../hooks/index.js";
import type { Check, Observation, Target } from "./types.js";

/** How a level's transport is opened; a test substitutes a broken engine. */
export type EngineOpener = (dir: string) => Promise<EngineTransport>;

const ownEngine: EngineOpener = async (dir) =>
  inProcessTransport(
    await createEngine({
      workspace: join(dir, "workspace"),
      journal: { path: join(dir, "hooks.db"), signer: generateKeyPair("ed25519") },
    }),
    { closeEngine: true },
  );

/** The rows of a level-3 run that a level requires (hooks and tool categories of the level, ask from 2, directives at 3). */
function rowsOf(r: ConformanceReport, level: Level): ConformanceRow[] {
  const hooks = new Set<string>(HOOK_POINTS.filter((p) => HOOK_TABLE[p].level <= level));
  const tools = new Set<string>(LEVEL_TOOLS[level]);
  const name = (check: string) => check.slice(0, check.indexOf(":"));
  return r.rows.filter((x) => {
    if (x.group === "hooks") return hooks.has(name(x.check));
    if (x.group === "tools") return tools.has(name(x.check));
    if (x.group === "directives") return level === 3;
    if (x.group === "ask resolution") return level >= 2;
    if (x.group === "verdicts") return level >= 2 || !x.check.startsWith("ask");
    return true;
  });
}

function summarize(r: ConformanceReport, level: Level): Observation {
  const rows = rowsOf(r, level);
  const failed = rows.filter((x) => !x.pass && x.required);
  const hooks = HOOK_POINTS.filter((p) => HOOK_TABLE[p].level <= level);
  const covered = (names: readonly string[], group: string) =>
    names.filter((n) => {
      const mine = rows.filter((x) => x.group === group && x.check.startsWith(`${n}:`));
      return mine.length > 0 && mine.every((x) => x.pass);
    }).length;
  return {
    pass: rows.length > 0 && failed.length === 0,
    observed: failed.length
      ? `${failed.length}/${rows.length} failed: ${failed
          .slice(0, 3)
          .map((x) => `${x.check} [${x.detail.slice(0, 60)}]`)
          .join("; ")}`
      : `${rows.length} checks pass; hooks ${covered(hooks, "hooks")}/${hooks.length}, tool categories ${covered(LEVEL_TOOLS[level], "tools")}/${LEVEL_TOOLS[level].length}`,
  };
}

/**
 * One level-3 run of the driver per target (every hook point and tool category, ask
 * resolution, directives, failure policy), judged per level: the levels are nested, and one
 * run keeps a remote host principal from collecting the denials of three.
 */
export async function aartsReport(open: EngineOpener, label: string): Promise<ConformanceReport> {
  const dir = mkdtempSync(join(tmpdir(), "warden-conformance-aarts-"));
  try {
    const transport = await open(dir);
    try {
      return await runConformance({ level: 3, engine: label, transport, workspace: join(dir, "workspace") });
    } finally {
      await transport.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function aartsChecks(opener: EngineOpener = ownEngine): Check[] {
  const reports = new Map<string, Promise<ConformanceReport>>();
  const once = (key: string, open: EngineOpener) => {
    let p = reports.get(key);
    if (p === undefined) {
      p = aartsReport(open, key);
      reports.set(key, p);
    }
    return p;
  };
  const title: Record<Level, string> = {
    1: "Level 1 Basic: SessionStart/PreToolUse, the six core tool categories, allow/deny",
    2: "Level 2 Standard: prompt lifecycle hooks, all tool categories, ask with resolutions",
    3: "Level 3 Comprehensive: every hook point, sub-agent ceiling, memory hooks",
  };
  return ([1, 2, 3] as const).map((level) => ({
    spec: "aarts" as const,
    id: `AARTS-L${level}`,
    title: title[level],
    section: "AARTS §11 Conformance Levels",
    library: async () => summarize(await once("warden (in process)", opener), level),
    url: async (t: Target & { kind: "url" }) =>
      t.hostToken === undefined
        ? {
            pass: false,
            observed: "",
            skipped: "needs a host-role agent token ($WARDEN_HOST_TOKEN) for /v1/hooks",
          }
        : summarize(await once(t.url, async () => httpTransport(t.url, t.hostToken as string)), level),
  }));
}
