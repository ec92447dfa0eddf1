// `warden init` inside a git checkout: a deployment holds private keys and token hashes, so
// written where git tracks it, one `git add` commits them. Init refuses such a directory
// (ERR_CLI_INIT_INSIDE_CHECKOUT, nothing written) unless git ignores it or the operator
// says --inside-checkout; this repository's .gitignore and biome.json cover the usual
// deployment directories and key files, so neither `git add` nor `npm run lint` meet them.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A fresh git checkout in a temp directory. */
function checkout(): string {
  const d = mkdtempSync(join(tmpdir(), "warden-init-git-"));
  dirs.push(d);
  execFileSync("git", ["init", "-q", d]);
  return d;
}

/** What `git add -A` would stage in `repo` (the harm: keys under version control). */
function committable(repo: string): string[] {
  const out = execFileSync("git", ["status", "--porcelain", "--untracked-files=all"], {
    cwd: repo,
    encoding: "utf8",
  });
  return out.split("\n").filter((l) => l !== "");
}

describe("warden init: a deployment's keys never land where git would commit them", () => {
  it("refuses a directory inside a checkout that git does not ignore, and writes nothing", async () => {
    const repo = checkout();
    const r = await runCli("init", join(repo, "my-deployment"));
    expect(r.code).toBe(2);
    expect(r.err).toContain("ERR_CLI_INIT_INSIDE_CHECKOUT");
    expect(r.err).toContain("--inside-checkout");
    expect(existsSync(join(repo, "my-deployment"))).toBe(false);
    expect(committable(repo)).toEqual([]);
  });

  it("refuses the checkout's own root and a subfolder of a subfolder alike", async () => {
    const repo = checkout();
    mkdirSync(join(repo, "src", "deep"), { recursive: true });
    for (const target of [repo, join(repo, "src", "deep", "dep")]) {
      const r = await runCli("init", target, "--force");
      expect(r.err).toContain("ERR_CLI_INIT_INSIDE_CHECKOUT");
    }
    expect(committable(repo)).toEqual([]);
  });

  it("writes a directory git ignores there; nothing of it is committable", async () => {
    const repo = checkout();
    writeFileSync(join(repo, ".gitignore"), "/my-deployment/\n");
    const r = await runCli("init", join(repo, "my-deployment"), "--json");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(existsSync(join(repo, "my-deployment", "keys", "journal.pem"))).toBe(true);
    expect(committable(repo)).toEqual(["?? .gitignore"]);
  });

  it("a directory whose key files alone are ignored still counts as committable (the config is not)", async () => {
    const repo = checkout();
    writeFileSync(join(repo, ".gitignore"), "*.pem\n");
    const r = await runCli("init", join(repo, "dep"));
    expect(r.err).toContain("ERR_CLI_INIT_INSIDE_CHECKOUT");
    expect(existsSync(join(repo, "dep"))).toBe(false);
  });

  it("writes inside the checkout when told to (--inside-checkout)", async () => {
    const repo = checkout();
    const r = await runCli("init", join(repo, "dep"), "--inside-checkout", "--json");
    expect(r.code).toBe(0);
    expect(existsSync(join(repo, "dep", "sidecar.yaml"))).toBe(true);
  });

  it("fails closed when git cannot say whether the directory is ignored (no git on PATH)", async () => {
    const repo = checkout();
    writeFileSync(join(repo, ".gitignore"), "/dep/\n");
    const path = process.env.PATH;
    process.env.PATH = join(repo, "no-such-bin");
    try {
      const r = await runCli("init", join(repo, "dep"));
      expect(r.err).toContain("ERR_CLI_INIT_INSIDE_CHECKOUT");
    } finally {
      process.env.PATH = path;
    }
    expect(existsSync(join(repo, "dep"))).toBe(false);
  });

  it("writes outside any checkout without a flag", async () => {
    const d = mkdtempSync(join(tmpdir(), "warden-init-nogit-"));
    dirs.push(d);
    const r = await runCli("init", join(d, "dep"), "--json");
    expect(r.code).toBe(0);
  });
});

describe("this repository ignores deployments and key files", () => {
  const ignored = (p: string) =>
    spawnSync("git", ["check-ignore", "-q", "--", p], { cwd: REPO }).status === 0;

  it("git ignores the quick start's deployment, deploy/keys, deploy/state and key files anywhere", () => {
    for (const p of [
      "my-deployment/keys/journal.pem",
      "my-deployment/sidecar.yaml",
      "deployments/staging/keys/contracts.jwk.json",
      "deploy/keys/journal.pem",
      "deploy/keys/anything",
      "deploy/state/journal.db",
      "examples/sidecar/keys/journal.pem",
      "some/where/key.jwk.json",
      "journal.db-wal",
    ])
      expect(ignored(p), p).toBe(true);
    // The READMEs that say what goes there stay tracked.
    expect(ignored("deploy/keys/README.txt")).toBe(false);
  });

  it("warden init my-deployment works from the clone's root (the README's command)", async () => {
    const name = `deployments/init-test-${process.pid}-${Date.now()}`;
    dirs.push(join(REPO, name));
    const r = await runCli("init", join(REPO, name), "--json");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(ignored(`${name}/keys/journal.pem`)).toBe(true);
  });

  it("biome's lint does not read deployment directories (npm run lint stays green beside one)", () => {
    const name = `deployments/lint-test-${process.pid}-${Date.now()}`;
    const dir = join(REPO, name);
    dirs.push(dir);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "badly-formatted.json"), '{"a":1,   "b":[1,2]}');
    const biome = join(REPO, "node_modules", "@biomejs", "biome", "bin", "biome");
    const r = spawnSync(process.execPath, [biome, "check", name], { cwd: REPO, encoding: "utf8" });
    expect(`${r.stdout}${r.stderr}`).toContain("provided but ignored");
    expect(`${r.stdout}${r.stderr}`).not.toContain("badly-formatted.json");
  });
});
