// AARTS conformance levels 1–3 (§11) through the existing `warden hooks conformance` driver:
// in library mode against Warden's own engine in process (its journal in a scratch
// directory), in URL mode against the sidecar's HTTP hook transport with a host-role token.
// One row per level; a failing level names the driver's failed checks.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateKeyPair } from "../crypto/index.js";
import {
  type ConformanceReport,
  createEngine,
  type EngineTransport,
  httpTransport,
  inProcessTransport,
  type Level,
  runConformance,
} from "../hooks/index.js";
import type { Check, Observation, Target } from "./types.js";

/** How a level's transport is opened; a test substitutes a broken engine. */
export type EngineOpener = (dir: string) => Promise<EngineTransport>;

const ownEngine: EngineOpener = async (dir) =>
  inProcessTransport(
    await createEngine({ workspace: join(dir, "workspace"), journal: { path: join(dir, "hooks.db"), signer: generateKeyPair("ed25519") } }),
    { closeEngine: true },
  );

function summarize(r: ConformanceReport): Observation {
  const failed = r.rows.filter((x) => !x.pass && x.required);
  const c = r.coverage;
  return {
    pass: r.passed,
    observed: failed.length
      ? `${failed.length}/${r.rows.length} failed: ${failed.slice(0, 3).map((x) => `${x.check} [${x.detail.slice(0, 60)}]`).join("; ")}`
      : `${r.rows.length} checks pass; hooks ${c.hooks.length}/${c.hooksRequired}, tool categories ${c.tools.length}/${c.toolsRequired}`,
  };
}

export async function aartsLevel(level: Level, open: EngineOpener, label: string): Promise<Observation> {
  const dir = mkdtempSync(join(tmpdir(), "warden-conformance-aarts-"));
  try {
    const transport = await open(dir);
    try {
      // The HookHost checks test Warden's host side, not the engine: run them once, at level 1.
      const report = await runConformance({ level, engine: label, transport, workspace: join(dir, "workspace"), host: level === 1 });
      return summarize(report);
    } finally {
      await transport.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function aartsChecks(opener: EngineOpener = ownEngine): Check[] {
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
    library: () => aartsLevel(level, opener, "warden (in process)"),
    url: async (t: Target & { kind: "url" }) =>
      t.hostToken === undefined
        ? { pass: false, observed: "", skipped: "needs a host-role agent token ($WARDEN_HOST_TOKEN) for /v1/hooks" }
        : aartsLevel(level, async () => httpTransport(t.url, t.hostToken as string), t.url),
  }));
}
