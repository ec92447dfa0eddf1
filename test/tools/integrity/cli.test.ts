// `warden contract sign|verify` end to end, in-process: exit 0 only when verified, 1 for
// a failed verification (with its code), 2 for unusable input.
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadPublicKeyFile } from "../../../src/crypto/index.js";
import { buildDiscoveryDocument, buildRevocationDocument } from "../../../src/tools/integrity/index.js";
import { runCli } from "../../helpers/cli.js";
import { type RouteServer, startRouteServer } from "../../helpers/route-server.js";
import { FIXTURES } from "../helpers.js";
import { tempDir } from "./helpers.js";

interface Setup {
  dir: string;
  manifest: string;
  key: string;
  wellKnown: string;
  fingerprint: string;
}

async function newKey(
  dir: string,
  name: string,
): Promise<{ key: string; wellKnown: string; fingerprint: string }> {
  const gen = await runCli("keys", "generate", "--type", "p256", "--out", dir, "--name", name, "--json");
  expect(gen.code).toBe(0);
  const res = JSON.parse(gen.out);
  const wellKnown = join(dir, `${name}.well-known.json`);
  writeFileSync(
    wellKnown,
    JSON.stringify(
      buildDiscoveryDocument({ publicKey: loadPublicKeyFile(res.files.publicPem), developerName: "Test" }),
    ),
  );
  return { key: res.files.privatePem, wellKnown, fingerprint: res.fingerprint };
}

async function setup(): Promise<Setup> {
  const dir = tempDir();
  const manifest = join(dir, "whois_lookup.clad.toml");
  copyFileSync(join(FIXTURES, "whois_lookup.clad.toml"), manifest);
  const k = await newKey(dir, "publisher");
  const signed = await runCli("contract", "sign", manifest, "--key", k.key, "--domain", "tools.example");
  expect(signed.err).toBe("");
  expect(signed.code).toBe(0);
  return { dir, manifest, ...k };
}

describe("warden contract sign / verify (manifests)", () => {
  it("signs a ToolClad manifest and verifies it against the discovery document", async () => {
    const s = await setup();
    const sig = JSON.parse(readFileSync(`${s.manifest}.sig`, "utf8"));
    expect(sig).toMatchObject({
      tool_name: "whois_lookup",
      domain: "tools.example",
      signer_fingerprint: s.fingerprint,
    });
    const v = await runCli("contract", "verify", s.manifest, "--well-known", s.wellKnown);
    expect(v).toMatchObject({ code: 0, err: "" });
    expect(v.out).toContain(`key       ${s.fingerprint}`);
    expect(v.out).toContain(`contract  ${sig.contract_hash}`);
  });

  it("a comment or reordering does not change the signed contract; a changed rule does", async () => {
    const s = await setup();
    writeFileSync(s.manifest, `# reformatted\n${readFileSync(s.manifest, "utf8")}\n\n`);
    expect((await runCli("contract", "verify", s.manifest, "--well-known", s.wellKnown)).code).toBe(0);
    writeFileSync(
      s.manifest,
      readFileSync(s.manifest, "utf8").replace("timeout_seconds = 30", "timeout_seconds = 3000"),
    );
    const v = await runCli("contract", "verify", s.manifest, "--well-known", s.wellKnown);
    expect(v.code).toBe(1);
    expect(v.err).toContain("ERR_INTEGRITY_SIGNATURE_INVALID");
  });

  it("an unsigned manifest → exit 1, ERR_INTEGRITY_UNSIGNED", async () => {
    const dir = tempDir();
    const manifest = join(dir, "whois_lookup.clad.toml");
    copyFileSync(join(FIXTURES, "whois_lookup.clad.toml"), manifest);
    const k = await newKey(dir, "k");
    const v = await runCli("contract", "verify", manifest, "--well-known", k.wellKnown, "--json");
    expect(v.code).toBe(1);
    expect(JSON.parse(v.out)).toMatchObject({ verified: false, code: "ERR_INTEGRITY_UNSIGNED" });
  });

  it("TOFU pins: a key change is refused until --repin", async () => {
    const s = await setup();
    const pins = join(s.dir, "pins.json");
    const first = await runCli("contract", "verify", s.manifest, "--well-known", s.wellKnown, "--pins", pins);
    expect(first.code).toBe(0);
    expect(first.out).toContain("pin       first_use");
    const other = await newKey(s.dir, "rotated");
    expect(
      (await runCli("contract", "sign", s.manifest, "--key", other.key, "--domain", "tools.example")).code,
    ).toBe(0);
    const changed = await runCli(
      "contract",
      "verify",
      s.manifest,
      "--well-known",
      other.wellKnown,
      "--pins",
      pins,
    );
    expect(changed.code).toBe(1);
    expect(changed.err).toContain("ERR_INTEGRITY_KEY_PIN_MISMATCH");
    const repin = await runCli(
      "contract",
      "verify",
      s.manifest,
      "--well-known",
      other.wellKnown,
      "--pins",
      pins,
      "--repin",
    );
    expect(repin.code).toBe(0);
    expect(repin.out).toContain("pin       repinned");
    expect(
      (await runCli("contract", "verify", s.manifest, "--well-known", other.wellKnown, "--pins", pins)).code,
    ).toBe(0);
  });

  it("--require-pin refuses a key never pinned", async () => {
    const s = await setup();
    const v = await runCli(
      "contract",
      "verify",
      s.manifest,
      "--well-known",
      s.wellKnown,
      "--pins",
      join(s.dir, "p.json"),
      "--require-pin",
    );
    expect(v.code).toBe(1);
    expect(v.err).toContain("ERR_INTEGRITY_KEY_NOT_PINNED");
  });

  it("a revocation document revoking the signing key → exit 1", async () => {
    const s = await setup();
    const rev = join(s.dir, "revocations.json");
    writeFileSync(
      rev,
      JSON.stringify(
        buildRevocationDocument("tools.example", [{ fingerprint: s.fingerprint, reason: "key_compromise" }]),
      ),
    );
    const v = await runCli(
      "contract",
      "verify",
      s.manifest,
      "--well-known",
      s.wellKnown,
      "--revocation",
      rev,
    );
    expect(v.code).toBe(1);
    expect(v.err).toContain("ERR_INTEGRITY_KEY_REVOKED");
  });

  it("--trusted-key verifies without discovery", async () => {
    const s = await setup();
    expect(
      (await runCli("contract", "verify", s.manifest, "--trusted-key", s.key.replace(/\.pem$/, ".pub.pem")))
        .code,
    ).toBe(0);
    const none = await runCli("contract", "verify", s.manifest);
    expect(none.code).toBe(1);
    expect(none.err).toContain("ERR_INTEGRITY_KEY_UNKNOWN");
  });

  it("sign refuses an Ed25519 key (exit 2) and an unreadable manifest (exit 2)", async () => {
    const s = await setup();
    expect((await runCli("keys", "generate", "--type", "ed25519", "--out", s.dir)).code).toBe(0);
    const ed = await runCli(
      "contract",
      "sign",
      s.manifest,
      "--key",
      join(s.dir, "ed25519.pem"),
      "--domain",
      "d.example",
    );
    expect(ed.code).toBe(2);
    expect(ed.err).toContain("ERR_CLI_USAGE");
    const missing = await runCli(
      "contract",
      "verify",
      join(s.dir, "nope.clad.toml"),
      "--well-known",
      s.wellKnown,
    );
    expect(missing.code).toBe(2);
    expect(missing.err).toContain("ERR_CLI_INPUT");
  });
});

describe("warden contract verify (other documents)", () => {
  it("a JSON file that is none of the known kinds → exit 2", async () => {
    const f = join(tempDir(), "x.json");
    writeFileSync(f, '{"hello":1}');
    expect((await runCli("contract", "verify", f)).code).toBe(2);
  });
});

describe("warden contract verify --well-known URL", () => {
  let srv: RouteServer;
  let base: string;
  let routes: Map<string, string>;

  beforeAll(async () => {
    srv = await startRouteServer();
    ({ base, routes } = srv);
  });
  afterAll(() => srv.close());

  it("follows the discovery document's revocation_endpoint and fails closed when it is unreachable", async () => {
    const s = await setup();
    const discovery = JSON.parse(readFileSync(s.wellKnown, "utf8"));
    routes.set(
      "/pub/.well-known/schemapin.json",
      JSON.stringify({ ...discovery, revocation_endpoint: `${base}/pub/revoked.json` }),
    );
    routes.set(
      "/pub/revoked.json",
      JSON.stringify(
        buildRevocationDocument("tools.example", [{ fingerprint: s.fingerprint, reason: "superseded" }]),
      ),
    );
    const url = `${base}/pub/.well-known/schemapin.json`;
    const revoked = await runCli(
      "contract",
      "verify",
      s.manifest,
      "--well-known",
      url,
      "--allow-loopback-http",
    );
    expect(revoked.code).toBe(1);
    expect(revoked.err).toContain("ERR_INTEGRITY_KEY_REVOKED");
    routes.delete("/pub/revoked.json");
    const unreachable = await runCli(
      "contract",
      "verify",
      s.manifest,
      "--well-known",
      url,
      "--allow-loopback-http",
    );
    expect(unreachable.code).toBe(1);
    expect(unreachable.err).toContain("ERR_INTEGRITY_FETCH");
    routes.set("/pub/revoked.json", JSON.stringify(buildRevocationDocument("tools.example", [])));
    expect(
      (await runCli("contract", "verify", s.manifest, "--well-known", url, "--allow-loopback-http")).code,
    ).toBe(0);
  });
});
