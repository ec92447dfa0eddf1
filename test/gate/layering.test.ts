// Architecture: the Gate and policy never see the model. Neither may import the loop,
// model adapters, hooks, server or CLI, and lower layers never import higher ones.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/repo.js";

// Everything the composition root may wire; an entry point (hooks, like the sidecar) may
// also use the runtime itself.
const BELOW_ENTRY_POINTS = [
  "contracts",
  "crypto",
  "tools",
  "context",
  "policy",
  "journal",
  "trust",
  "identity",
  "gate",
  "executors",
  "messaging",
  "store-pg",
];

const ALLOWED: Record<string, string[]> = {
  contracts: [],
  crypto: ["contracts"],
  tools: ["contracts", "crypto"],
  context: ["contracts"],
  policy: ["contracts", "crypto"],
  journal: ["contracts", "crypto"],
  trust: ["contracts", "crypto", "journal"],
  identity: ["contracts", "crypto", "context", "policy"],
  gate: ["contracts", "crypto", "tools", "context", "policy", "journal", "identity"],
  executors: ["contracts", "crypto", "tools", "journal", "gate"],
  messaging: ["contracts", "crypto", "context", "policy", "journal", "gate"],
  "store-pg": ["contracts", "crypto", "context", "journal", "trust", "identity", "gate", "messaging"],
  runtime: BELOW_ENTRY_POINTS,
  memory: [...BELOW_ENTRY_POINTS, "runtime"],
  "mcp-gateway": [...BELOW_ENTRY_POINTS, "runtime"],
  // OCSF/CEF mapping, the journal-tailing sink, OTLP wiring, the embedder adapters that
  // talk to the world: reads the journal, never the Gate.
  telemetry: ["contracts", "crypto", "context", "journal"],
  hooks: [...BELOW_ENTRY_POINTS, "runtime", "memory"],
  evidence: [...BELOW_ENTRY_POINTS, "runtime"],
  // The browser console (served by the sidecar under /console): reads runs, the journal
  // and evidence, decides approvals through the runtime; never the loop or the server.
  console: [...BELOW_ENTRY_POINTS, "runtime", "evidence", "telemetry"],
  // Framework adapters: a governed tool over a composed runtime (the loop's catalog and
  // executor route) or a sidecar; never the server or the CLI.
  adapters: [...BELOW_ENTRY_POINTS, "runtime", "loop"],
  // The specifications' verification procedures run against a deployment: composes runtimes,
  // drives the loop's types, the hooks driver, replay and the OCSF mapping; never server/cli.
  conformance: [
    ...BELOW_ENTRY_POINTS,
    "runtime",
    "hooks",
    "loop",
    "memory",
    "evidence",
    "mcp-gateway",
    "telemetry",
  ],
};

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : [];
  });
}

describe("layering", () => {
  for (const [layer, allowed] of Object.entries(ALLOWED)) {
    it(`src/${layer} imports only ${allowed.join(", ") || "nothing above it"}`, () => {
      for (const f of files(join(REPO_ROOT, "src", layer))) {
        const text = readFileSync(f, "utf8");
        for (const m of text.matchAll(/from "(\.\.\/(?:\.\.\/)*)([a-z-]+)\//g)) {
          const depth = (m[1] ?? "").split("../").length - 1;
          const rel = f.slice(join(REPO_ROOT, "src", layer).length + 1).split("/").length - 1;
          if (depth <= rel) continue; // stays inside the layer
          expect(allowed, `${f} imports ${m[2]}`).toContain(m[2]);
        }
      }
    });
  }

  it("src/gate and src/policy import nothing from the model or loop layers", () => {
    for (const layer of ["gate", "policy"]) {
      for (const f of files(join(REPO_ROOT, "src", layer))) {
        expect(readFileSync(f, "utf8"), f).not.toMatch(/from "[./]*(loop|hooks|server|cli)\//);
      }
    }
  });

  it("other layers use only a layer's public index", () => {
    for (const f of files(join(REPO_ROOT, "src"))) {
      const text = readFileSync(f, "utf8");
      for (const m of text.matchAll(/from "\.\.\/([a-z-]+)\/([a-z-]+)\.js"/g)) {
        const own = f.includes(`/src/${m[1]}/`);
        if (!own) expect(m[2], `${f} imports ${m[1]}/${m[2]}`).toBe("index");
      }
    }
  });
});
