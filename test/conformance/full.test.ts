// `warden conformance` on the full example deployment (examples/conformance: contract trust
// enforced, APAE Standard, lexical drift, the namespace sandbox): a temp copy of it gets its
// throwaway keys from the example's own make-keys.sh (run with the built CLI), then
// every check runs — E1, E3, E4 and the APAE profile checks as real scenarios — and every one
// passes (a check with no scenario yet would be listed with its reason, never passed).
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { REPO_ROOT } from "../helpers/repo.js";
import { SummarySchema } from "./schema.js";

const FULL = join(REPO_ROOT, "examples", "conformance");
/** The checks still without a scenario on a library target (never counted as a pass). */
const STILL_NOT_IMPLEMENTED: string[] = [];

/** Runs the copy's make-keys.sh as a person would (a built `warden`, through $WARDEN). */
function makeKeys(dir: string): void {
  const warden = `${process.execPath} ${join(REPO_ROOT, "bin", "warden.js")}`;
  execFileSync("sh", [join(dir, "make-keys.sh")], { env: { ...process.env, WARDEN: warden } });
}

describe("warden conformance on the full example deployment", () => {
  let dir = "";
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "warden-conf-full-"));
    cpSync(FULL, dir, { recursive: true, filter: (src) => !src.startsWith(join(FULL, "keys")) });
    makeKeys(dir);
  });
  afterAll(() => {
    if (dir !== "") rmSync(dir, { recursive: true, force: true });
  });

  it("the example ships no private key: make-keys.sh creates them", () => {
    expect(readFileSync(join(FULL, ".gitignore"), "utf8")).toMatch(/^keys\/$/m);
    expect(existsSync(join(dir, "keys", "publisher.pem"))).toBe(true);
    expect(existsSync(join(dir, "keys", "ect.pem"))).toBe(true);
    expect(existsSync(join(dir, "contracts", "echo.clad.toml.sig"))).toBe(true);
  });

  it("passes every check of all four specifications (--json)", async () => {
    const r = await runCli("conformance", "--json", "--config", join(dir, "sidecar.yaml"));
    const s = SummarySchema.parse(JSON.parse(r.out));
    const failed = s.results.filter((x) => x.result === "fail");
    expect(failed, JSON.stringify(failed, null, 2)).toEqual([]);
    expect(r.code).toBe(0);
    expect(s.passed).toBe(true);
    const ni = s.results.filter((x) => x.result === "not-implemented");
    expect(
      ni.map((x) => x.id),
      JSON.stringify(ni, null, 2),
    ).toEqual(STILL_NOT_IMPLEMENTED);
    // The features this deployment turns on ran as scenarios, not as configuration reads.
    const seen = (id: string) => s.results.find((x) => x.id === id)?.observed ?? "";
    expect(seen("E1")).toMatch(/ERR_TOOL_REGISTRY_UNVERIFIED/);
    expect(seen("E3")).toMatch(/drift/);
    expect(seen("E4")).toMatch(/hidden:\/etc\/passwd/);
    expect(seen("APAE-ECT")).toMatch(/profile standard requires L2: \d+ ECTs for one call, alg ES256/);
    expect(seen("APAE-QUARANTINE")).toMatch(/status quarantined; next call deny/);
    expect(seen("APAE-LIFT")).toMatch(/signed lift → LIFTED \(run: allow/);
    expect(seen("APAE-BEHAVIOR")).toMatch(
      /^periodic verification; probe outside the signed spec: allow.*\(1 naming its decision ECT\); spec change signed by an untrusted key → ERR_TRUST_SPEC_SIGNATURE_INVALID; .*0 new violations$/,
    );
  }, 600_000);
});
