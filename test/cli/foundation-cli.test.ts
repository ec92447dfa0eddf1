import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { REPO_ROOT } from "../helpers/repo.js";

const tmp = () => mkdtempSync(join(tmpdir(), "warden-cli-"));

describe("warden keys", () => {
  it("generates an ed25519 pair with 0600 private files and shows only public info", async () => {
    const dir = tmp();
    const gen = await runCli("keys", "generate", "--type", "ed25519", "--out", dir, "--json");
    expect(gen.code).toBe(0);
    const res = JSON.parse(gen.out);
    expect(statSync(res.files.privatePem).mode & 0o777).toBe(0o600);
    const show = await runCli("keys", "show", res.files.privatePem, "--json");
    expect(show.code).toBe(0);
    const info = JSON.parse(show.out);
    expect(info.keyId).toBe(res.keyId);
    expect(show.out).not.toContain("PRIVATE");
    expect(JSON.stringify(info.publicJwk)).not.toContain('"d"');
  });

  it("generates a p256 pair and refuses to overwrite it", async () => {
    const dir = tmp();
    expect((await runCli("keys", "generate", "--type", "p256", "--out", dir)).code).toBe(0);
    const again = await runCli("keys", "generate", "--type", "p256", "--out", dir);
    expect(again.code).toBe(2);
    expect(again.err).toContain("ERR_CRYPTO_KEY_FILE_EXISTS");
  });

  it("rejects an unknown key type", async () => {
    const r = await runCli("keys", "generate", "--type", "rsa", "--out", tmp());
    expect(r.code).toBe(2);
    expect(r.err).toContain("ERR_CLI_USAGE");
  });

  it("fails on a missing required option with exit 2", async () => {
    expect((await runCli("keys", "generate", "--type", "p256")).code).toBe(2);
  });
});

describe("warden canon / hash", () => {
  it("prints canonical JSON and its hash", async () => {
    const f = join(tmp(), "r.json");
    writeFileSync(f, '{ "b": [1, 2.50], "a": "é" }');
    const c = await runCli("canon", f);
    expect(c.out).toBe('{"a":"é","b":[1,2.5]}\n');
    const h = await runCli("hash", f);
    expect(h.out).toMatch(/^sha256:[0-9a-f]{64}\n$/);
  });

  it("rejects duplicate keys in input files with a coded error", async () => {
    const f = join(tmp(), "dup.json");
    writeFileSync(f, '{"a":1,"a":2}');
    const r = await runCli("canon", f);
    expect(r.code).toBe(2);
    expect(r.err).toContain("ERR_JSON_DUPLICATE_KEY");
  });

  it("reports an unreadable file", async () => {
    const r = await runCli("hash", join(tmp(), "missing.json"));
    expect(r.code).toBe(2);
    expect(r.err).toContain("ERR_CLI_INPUT");
  });
});

describe("bin/warden.js", () => {
  it("runs the built CLI as a process", () => {
    const f = join(tmp(), "x.json");
    writeFileSync(f, '{"z":1,"a":2}');
    const r = spawnSync(process.execPath, [join(REPO_ROOT, "bin", "warden.js"), "canon", f], {
      encoding: "utf8",
    });
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe('{"a":2,"z":1}\n');
    expect(r.status).toBe(0);
    expect(readFileSync(f, "utf8")).toBe('{"z":1,"a":2}');
  });
});
