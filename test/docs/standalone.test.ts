// Docs that stand alone: a reader of the repository (or of the package) never meets a
// path into material outside it. Every Markdown file of the repository is read; none may
// point into the folder of upstream material beside the clone, and docs/sources.md names each upstream source by its public address.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/repo.js";

/** The folder of upstream material beside a clone: docs must not name a path into it (never read here). */
const SIBLING = "shared";
const SKIP = new Set(["node_modules", ".git", "dist", "coverage"]);

function markdownFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name) || entry.name.startsWith("my-deployment")) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...markdownFiles(path));
    else if (entry.name.endsWith(".md")) found.push(path);
  }
  return found;
}

describe("docs stand alone", () => {
  const docs = markdownFiles(REPO_ROOT);

  it("finds the README and the docs folder", () => {
    const names = docs.map((p) => relative(REPO_ROOT, p));
    expect(names).toContain("README.md");
    expect(names).toContain(join("docs", "journal.md"));
  });

  it("no doc points into the upstream material beside the clone", () => {
    const offenders = docs
      .filter((p) => new RegExp(`\\.\\.[/\\\\]${SIBLING}\\b`).test(readFileSync(p, "utf8")))
      .map((p) => relative(REPO_ROOT, p));
    expect(offenders).toEqual([]);
  });

  it("docs/sources.md names every upstream specification, AgentDojo and the vectors by public source", () => {
    const text = readFileSync(join(REPO_ROOT, "docs", "sources.md"), "utf8");
    for (const needle of [
      "DARE",
      "https://github.com/deterministic-agents/gate-contracts",
      "https://github.com/ThirdKeyAI/OpenAgentTrustStack",
      "APAE",
      "https://github.com/gendigitalinc/aarts",
      "https://github.com/AriKernel/arikernel",
      "https://github.com/ethz-spylab/agentdojo",
      "https://github.com/ThirdKeyAI/SchemaPin",
      "https://github.com/ThirdKeyAI/ToolClad",
      "WARDEN_VECTORS=",
    ]) {
      expect(text, needle).toContain(needle);
    }
  });
});
