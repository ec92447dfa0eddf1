// The sidecar configuration (strict, credentials distinct, approvers separate from
// agents), `warden sidecar --check / --new-token`, the shipped example configuration,
// and the plain-fetch client example run against a real sidecar.
import { spawn } from "node:child_process";
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { generateKeyPair, saveKeyPair } from "../../src/crypto/index.js";
import {
  hashToken,
  initJournalKey,
  loadSidecarConfig,
  openSidecarRuntime,
  parseSidecarConfig,
  startSidecar,
} from "../../src/server/index.js";
import { runCli } from "../helpers/cli.js";

const ROOT = resolve(import.meta.dirname, "../..");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), "warden-sidecar-cfg-"));
  dirs.push(d);
  return d;
}

const base = () => ({
  policies: ["p.yaml"],
  journal: { path: "j.db", key: "k.pem" },
  gate: { principals: [{ id: "agent-a", roles: ["agent"] }] },
  auth: {
    principals: [{ id: "agent-a", tokenSha256: hashToken("agent-token") }],
    approvers: [{ id: "op", roles: ["approver"], tokenSha256: hashToken("op-token") }],
  },
});

function invalid(input: unknown): string {
  try {
    parseSidecarConfig(input, "/srv/warden");
  } catch (err) {
    expect((err as { code?: string }).code).toBe("ERR_SERVER_CONFIG_INVALID");
    return (err as Error).message;
  }
  throw new Error("configuration was accepted");
}

describe("sidecar configuration", () => {
  it("applies defaults and resolves paths against the configuration's directory", () => {
    const { config } = parseSidecarConfig(base(), "/srv/warden");
    expect(config).toMatchObject({
      host: "127.0.0.1",
      port: 8787,
      policies: ["/srv/warden/p.yaml"],
      journal: { path: "/srv/warden/j.db", key: "/srv/warden/k.pem" },
      limits: { bodyBytes: 1024 * 1024, jsonDepth: 32, rateLimitPerMinute: 600 },
      metrics: { public: false },
    });
  });

  it("refuses a token hash used by both an agent and an approver", () => {
    const c = base();
    c.auth.approvers[0]!.tokenSha256 = hashToken("agent-token");
    expect(invalid(c)).toMatch(/reuses the token hash/);
  });

  it("refuses an approver that is also an agent principal", () => {
    const c = base();
    c.auth.approvers[0]!.id = "agent-a";
    expect(invalid(c)).toMatch(/approvers must be separate identities/);
  });

  it("refuses a credential for a principal the Gate does not know", () => {
    const c = base();
    c.auth.principals.push({ id: "ghost", tokenSha256: hashToken("ghost") });
    expect(invalid(c)).toMatch(/ghost is not a principal/);
  });

  it("refuses plaintext tokens, unknown members and bad limits", () => {
    const plain = base();
    plain.auth.principals[0]!.tokenSha256 = "agent-token";
    expect(invalid(plain)).toMatch(/auth\.principals\.0\.tokenSha256/);
    expect(invalid({ ...base(), debug: true })).toMatch(/\(root\)|debug/);
    expect(invalid({ ...base(), limits: { bodyBytes: 10 } })).toMatch(/limits\.bodyBytes/);
    expect(invalid({ ...base(), auth: { principals: [] } })).toMatch(/auth\.principals/);
  });

  it("reports an invalid gate section as a sidecar configuration error", () => {
    expect(invalid({ ...base(), gate: { principals: [{ id: "a" }, { id: "a" }] } })).toMatch(
      /declared twice/,
    );
  });

  it("signs the journal in batches unless told otherwise, and refuses an unknown mode", () => {
    expect(parseSidecarConfig(base(), "/srv/warden").config.journal.signatures).toBe("batch");
    const entry = { ...base(), journal: { ...base().journal, signatures: "entry" } };
    expect(parseSidecarConfig(entry, "/srv/warden").config.journal.signatures).toBe("entry");
    for (const bad of ["sometimes", "", "BATCH", 1, null]) {
      expect(invalid({ ...base(), journal: { ...base().journal, signatures: bad } })).toMatch(
        /journal\.signatures/,
      );
    }
  });

  it("refuses to open a journal key that others can read", async () => {
    const d = tmp();
    const key = saveKeyPair(generateKeyPair("ed25519"), d, { name: "journal" });
    chmodSync(key.privatePem, 0o644);
    writeFileSync(join(d, "p.yaml"), 'name: p\nversion: "1"\nrules: []\n');
    const loaded = parseSidecarConfig({ ...base(), journal: { path: "j.db", key: key.privatePem } }, d);
    await expect(openSidecarRuntime(loaded)).rejects.toMatchObject({
      code: "ERR_CRYPTO_KEY_FILE_PERMISSIONS",
    });
  });
});

/** A copy of examples/sidecar with a fresh journal key. */
function exampleDir(): string {
  const d = tmp();
  cpSync(join(ROOT, "examples/sidecar"), d, { recursive: true });
  rmSync(join(d, "keys"), { recursive: true, force: true });
  rmSync(join(d, "journal.db"), { force: true });
  mkdirSync(join(d, "keys"), { mode: 0o700 });
  saveKeyPair(generateKeyPair("ed25519"), join(d, "keys"), { name: "journal" });
  return d;
}

describe("warden sidecar", () => {
  it("--check accepts the shipped example configuration (exit 0)", async () => {
    const d = exampleDir();
    const r = await runCli("sidecar", "--check", "--config", join(d, "sidecar.yaml"), "--json");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out);
    expect(report).toMatchObject({ ok: true, summary: { contracts: ["echo"], principals: ["demo-agent"] } });
  });

  it("--check reports every problem and exits 2 without starting", async () => {
    const d = exampleDir();
    rmSync(join(d, "policy.yaml"));
    rmSync(join(d, "keys"), { recursive: true });
    writeFileSync(join(d, "contracts", "broken.clad.toml"), "[tool]\nname = 1\n");
    const r = await runCli("sidecar", "--check", "--config", join(d, "sidecar.yaml"));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/journal\.key/);
    expect(r.err).toMatch(/policies: ERR_POLICY_FILE/);
    expect(r.err).toMatch(/contracts: .*rejected/);
    expect(existsSync(join(d, "journal.db"))).toBe(false);
  });

  it("--check reports the journal's signature mode and refuses an unknown one", async () => {
    const d = exampleDir();
    const ok = await runCli("sidecar", "--check", "--config", join(d, "sidecar.yaml"), "--json");
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out).summary.journalSignatures).toBe("batch");
    const yaml = readFileSync(join(d, "sidecar.yaml"), "utf8");
    writeFileSync(join(d, "sidecar.yaml"), yaml.replace(/^journal:\n/m, "journal:\n  signatures: entry\n"));
    const entry = await runCli("sidecar", "--check", "--config", join(d, "sidecar.yaml"), "--json");
    expect(JSON.parse(entry.out).summary.journalSignatures).toBe("entry");
    const text = await runCli("sidecar", "--check", "--config", join(d, "sidecar.yaml"));
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/^signatures +entry$/m);
    writeFileSync(join(d, "sidecar.yaml"), yaml.replace(/^journal:\n/m, "journal:\n  signatures: never\n"));
    const bad = await runCli("sidecar", "--check", "--config", join(d, "sidecar.yaml"));
    expect(bad.code).not.toBe(0);
    expect(bad.err).toMatch(/ERR_SERVER_CONFIG_INVALID/);
    expect(bad.err).toMatch(/journal\.signatures/);
    expect(existsSync(join(d, "journal.db"))).toBe(false);
  });

  it("--check refuses a journal key that did not sign the existing chain", async () => {
    const d = exampleDir();
    const loaded = loadSidecarConfig(join(d, "sidecar.yaml"));
    const rt = await openSidecarRuntime(loaded);
    await rt.gate.evaluate({
      principalId: "demo-agent",
      runId: "r",
      toolClass: "shell",
      action: "exec",
      tool: "echo",
      parameters: { message: "hi" },
    });
    await rt.close();
    rmSync(join(d, "keys"), { recursive: true });
    mkdirSync(join(d, "keys"), { mode: 0o700 });
    saveKeyPair(generateKeyPair("ed25519"), join(d, "keys"), { name: "journal" });
    const r = await runCli("sidecar", "--check", "--config", join(d, "sidecar.yaml"));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/chain is signed by key/);
  });

  it("--config without a file and a bad --port are usage errors", async () => {
    expect((await runCli("sidecar")).code).toBe(2);
    const d = exampleDir();
    const r = await runCli("sidecar", "--config", join(d, "sidecar.yaml"), "--port", "99999");
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/ERR_CLI_USAGE/);
  });

  it("--new-token prints a token and the hash that authenticates it", async () => {
    const r = await runCli("sidecar", "--new-token", "--json");
    expect(r.code).toBe(0);
    const { token, tokenSha256 } = JSON.parse(r.out) as { token: string; tokenSha256: string };
    expect(token).toMatch(/^wdn_[A-Za-z0-9_-]{43}$/);
    expect(tokenSha256).toBe(hashToken(token));
  });

  const built = existsSync(join(ROOT, "dist/src/cli/main.js"));
  it("starts from the command line, serves, and stops gracefully on SIGTERM", async () => {
    expect(built, "run `npm run build` first: this test spawns dist/src/cli/main.js").toBe(true);
    const d = exampleDir();
    const child = spawn(
      process.execPath,
      [join(ROOT, "bin/warden.js"), "sidecar", "--config", join(d, "sidecar.yaml"), "--port", "0"],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let out = "";
    child.stdout.on("data", (b: Buffer) => {
      out += b.toString();
    });
    const url = await new Promise<string>((res, rej) => {
      const t = setTimeout(() => rej(new Error(`no address: ${out}`)), 15_000);
      child.stdout.on("data", () => {
        const m = /listening on (http:\/\/[^\s]+)/.exec(out);
        if (m) {
          clearTimeout(t);
          res(m[1] as string);
        }
      });
    });
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
    const exited = new Promise<number | null>((r) => child.on("exit", (c) => r(c)));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(out).toMatch(/stopped; journal flushed/);
  });
});

describe("examples/sidecar-client.mjs", () => {
  it("governs calls from a plain fetch script against the example configuration", async () => {
    const d = exampleDir();
    const server = await startSidecar(await openSidecarRuntime(loadSidecarConfig(join(d, "sidecar.yaml"))), {
      port: 0,
    });
    try {
      const child = spawn(process.execPath, [join(ROOT, "examples/sidecar-client.mjs")], {
        env: { ...process.env, WARDEN_URL: server.url as string },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout.on("data", (b: Buffer) => {
        out += b.toString();
      });
      const code = await new Promise<number | null>((r) => child.on("exit", (c) => r(c)));
      expect(out).not.toMatch(/FAIL/);
      expect(out).toMatch(/ok {3}allowed call executed/);
      expect(out).toMatch(/ok {3}principal spoofing refused: ERR_AUTH_PRINCIPAL_MISMATCH/);
      expect(code).toBe(0);
    } finally {
      await server.close();
    }
  });
});

describe("warden sidecar: a journal key that does not exist yet", () => {
  /** The example configuration without its key, as a fresh checkout has it. */
  function keyless(): string {
    const d = exampleDir();
    rmSync(join(d, "keys"), { recursive: true });
    return d;
  }

  it("refuses to start with ERR_SERVER_JOURNAL_KEY_MISSING naming the exact commands that create the key", async () => {
    const d = keyless();
    const cfg = join(d, "sidecar.yaml");
    const r = await runCli("sidecar", "--config", cfg, "--port", "0");
    expect(r.code).toBe(2);
    expect(r.err).toContain("ERR_SERVER_JOURNAL_KEY_MISSING");
    expect(r.err).toContain(`warden sidecar --config ${cfg} --init-keys`);
    expect(r.err).toContain(`warden keys generate --type ed25519 --out ${join(d, "keys")} --name journal`);
    expect(existsSync(join(d, "journal.db"))).toBe(false);
    expect(existsSync(join(d, "keys"))).toBe(false);
    const check = await runCli("sidecar", "--check", "--config", cfg);
    expect(check.code).toBe(2);
    expect(check.err).toMatch(/journal\.key: ERR_SERVER_JOURNAL_KEY_MISSING: .*--init-keys/);
  });

  it("the command it names creates the key: warden keys generate, then --check passes", async () => {
    const d = keyless();
    const cfg = join(d, "sidecar.yaml");
    const gen = await runCli(
      "keys",
      "generate",
      "--type",
      "ed25519",
      "--out",
      join(d, "keys"),
      "--name",
      "journal",
    );
    expect(gen.code).toBe(0);
    expect((await runCli("sidecar", "--check", "--config", cfg)).code).toBe(0);
  });

  it("--init-keys creates the key exclusively (0600 in a 0700 directory) and never replaces one", () => {
    const d = keyless();
    const loaded = loadSidecarConfig(join(d, "sidecar.yaml"));
    const created = initJournalKey(loaded);
    expect(created?.files.privatePem).toBe(join(d, "keys", "journal.pem"));
    expect(statSync(join(d, "keys")).mode & 0o777).toBe(0o700);
    expect(statSync(join(d, "keys", "journal.pem")).mode & 0o777).toBe(0o600);
    expect(statSync(join(d, "keys", "journal.jwk.json")).mode & 0o777).toBe(0o600);
    const before = readFileSync(join(d, "keys", "journal.pem"), "utf8");
    expect(initJournalKey(loaded)).toBeUndefined();
    expect(readFileSync(join(d, "keys", "journal.pem"), "utf8")).toBe(before);
  });

  it("--init-keys refuses to mint a new key for a journal that already exists (it could not continue the chain)", () => {
    const d = keyless();
    writeFileSync(join(d, "journal.db"), "");
    expect(() => initJournalKey(loadSidecarConfig(join(d, "sidecar.yaml")))).toThrow(
      expect.objectContaining({ code: "ERR_SERVER_JOURNAL_KEY_MISSING" }),
    );
    expect(existsSync(join(d, "keys"))).toBe(false);
  });

  it("--init-keys with --check is a usage error (check writes nothing)", async () => {
    const d = keyless();
    const r = await runCli("sidecar", "--check", "--init-keys", "--config", join(d, "sidecar.yaml"));
    expect(r.code).toBe(2);
    expect(r.err).toContain("ERR_CLI_USAGE");
    expect(existsSync(join(d, "keys"))).toBe(false);
  });

  const built = existsSync(join(ROOT, "dist/src/cli/main.js"));
  it("--init-keys creates the key and starts, from the command line", async () => {
    expect(built, "run `npm run build` first: this test spawns dist/src/cli/main.js").toBe(true);
    const d = keyless();
    const child = spawn(
      process.execPath,
      [
        join(ROOT, "bin/warden.js"),
        "sidecar",
        "--config",
        join(d, "sidecar.yaml"),
        "--init-keys",
        "--port",
        "0",
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    const listening = new Promise<void>((res, rej) => {
      const t = setTimeout(() => rej(new Error(`did not start: ${out}`)), 15_000);
      child.stdout.on("data", (b: Buffer) => {
        out += b.toString();
        if (/listening on http/.test(out)) {
          clearTimeout(t);
          res();
        }
      });
    });
    await listening;
    expect(out).toMatch(/created journal key /);
    expect(statSync(join(d, "keys", "journal.pem")).mode & 0o777).toBe(0o600);
    const exited = new Promise<number | null>((r) => child.on("exit", (c) => r(c)));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});
