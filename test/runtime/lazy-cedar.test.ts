// cedar-wasm is loaded only when a Cedar policy is configured (issue 16): a child process
// composes a runtime from the compiled dist/ and reports whether the module was loaded.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/repo.js";

const BUILT = resolve(REPO_ROOT, "dist/src/runtime/index.js");

/** Composes a runtime in a fresh process; answers whether cedar-wasm is in the module cache. */
function cedarLoadedWith(policies: string[]): boolean {
  const script = `
import { createRequire } from "node:module";
import { generateKeyPair } from ${JSON.stringify(pathToFileURL(resolve(REPO_ROOT, "dist/src/crypto/index.js")).href)};
const { composeRuntime } = await import(${JSON.stringify(pathToFileURL(BUILT).href)});
const rt = await composeRuntime({
  policy: ${JSON.stringify(policies)},
  journal: { path: ":memory:", signer: generateKeyPair("ed25519") },
  gate: { principals: { a: { id: "a", roles: [] } } },
});
await rt.close();
const cache = createRequire(import.meta.url).cache;
process.stdout.write(JSON.stringify(Object.keys(cache).some((k) => k.includes("cedar-wasm"))));
`;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  return JSON.parse(out) as boolean;
}

beforeAll(() => {
  // `npm test` builds first (pretest); a lone run builds when dist/ is missing.
  if (!existsSync(BUILT)) {
    try {
      execFileSync("npx", ["tsc", "-p", "tsconfig.build.json"], { cwd: REPO_ROOT, stdio: "pipe" });
    } catch {
      // Type errors elsewhere do not stop tsc from emitting; the check below decides.
    }
  }
  expect(existsSync(BUILT)).toBe(true);
});

describe("Cedar is loaded lazily", () => {
  it("a runtime with YAML policies only never loads cedar-wasm", () => {
    const dir = mkdtempSync(join(tmpdir(), "warden-lazy-"));
    const yaml = join(dir, "p.yaml");
    writeFileSync(yaml, "rules: []\n");
    expect(cedarLoadedWith([yaml])).toBe(false);
  });

  it("a runtime with a Cedar policy loads it (the probe can see it)", () => {
    expect(cedarLoadedWith([resolve(REPO_ROOT, "policies/guardrails.cedar")])).toBe(true);
  });
});
