// examples/conformance/make-keys.sh can be run again, as its header says: a second run keeps
// the keys it made and signs the contracts again (it used to stop on the existing key files),
// --force replaces the keys, and an unknown argument is a usage error. Runs the script itself
// in a temp copy of the example with the built CLI (`npm run build`) as $WARDEN.
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/repo.js";

const EXAMPLE = join(REPO_ROOT, "examples", "conformance");
const WARDEN = `${process.execPath} ${join(REPO_ROOT, "bin", "warden.js")}`;

describe("examples/conformance/make-keys.sh", () => {
  let dir = "";
  const script = () => join(dir, "make-keys.sh");
  const run = (...args: string[]) =>
    spawnSync("sh", [script(), ...args], { env: { ...process.env, WARDEN }, encoding: "utf8" });
  const key = (name: string) => readFileSync(join(dir, "keys", `${name}.pem`), "utf8");

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "warden-make-keys-"));
    cpSync(EXAMPLE, dir, { recursive: true, filter: (src) => !src.startsWith(join(EXAMPLE, "keys")) });
    execFileSync("sh", [script()], { env: { ...process.env, WARDEN } });
  });
  afterAll(() => {
    if (dir !== "") rmSync(dir, { recursive: true, force: true });
  });

  it("the header says it is safe to re-run and what --force does", () => {
    const header = readFileSync(script(), "utf8").split("\n").slice(0, 14).join("\n");
    expect(header).toMatch(/Safe to re-run/);
    expect(header).toMatch(/--force/);
  });

  it("a second run keeps both keys, says so, signs the contracts again and exits 0", () => {
    const before = { publisher: key("publisher"), ect: key("ect") };
    const sig = join(dir, "contracts", "echo.clad.toml.sig");
    rmSync(sig);
    const r = run();
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/keys\/publisher\.pem exists: kept/);
    expect(r.stdout).toMatch(/keys\/ect\.pem exists: kept/);
    expect(key("publisher")).toBe(before.publisher);
    expect(key("ect")).toBe(before.ect);
    expect(existsSync(sig)).toBe(true);
  });

  it("--force replaces both keys with new ones", () => {
    const before = { publisher: key("publisher"), ect: key("ect") };
    const r = run("--force");
    expect(r.status, r.stderr).toBe(0);
    expect(key("publisher")).not.toBe(before.publisher);
    expect(key("ect")).not.toBe(before.ect);
  });

  it("an unknown argument is a usage error (exit 2) that changes nothing", () => {
    const before = key("publisher");
    const r = run("--bogus");
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/usage: sh make-keys\.sh \[--force\]/);
    expect(key("publisher")).toBe(before);
  });
});
