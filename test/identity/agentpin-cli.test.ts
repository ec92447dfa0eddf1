// `warden identity init | issue | verify | pin` end to end, in process: the JSON result
// shape auditors and CI rely on, exit codes 0 / 1 / 2, private files 0600, pins written
// only with --update-pins and only for a valid credential, and the operator's re-pin.
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";

const tmp = () => mkdtempSync(join(tmpdir(), "warden-identity-"));

async function setup(domain = "acme.example") {
  const dir = tmp();
  const init = await runCli(
    "identity",
    "init",
    "--domain",
    domain,
    "--out",
    dir,
    "--agent",
    "bot",
    "--capabilities",
    "read:data,write:report",
    "--json",
  );
  expect(init).toMatchObject({ code: 0, err: "" });
  const cred = join(dir, "c.jwt");
  const issued = await runCli(
    "identity",
    "issue",
    "--dir",
    dir,
    "--agent",
    "bot",
    "--capabilities",
    "read:data",
    "--ttl",
    "15m",
    "--audience",
    "v.example",
    "--out",
    cred,
  );
  expect(issued).toMatchObject({ code: 0, err: "" });
  return { dir, cred, doc: join(dir, "agent-identity.json") };
}

const json = (out: string) => JSON.parse(out) as Record<string, unknown>;

describe("warden identity", () => {
  it("init writes the private key 0600 and a discovery document; issue writes the credential 0600", async () => {
    const { dir, cred, doc } = await setup();
    expect(statSync(join(dir, "agentpin.pem")).mode & 0o777).toBe(0o600);
    expect(statSync(cred).mode & 0o777).toBe(0o600);
    expect(json(readFileSync(doc, "utf8"))).toMatchObject({
      agentpin_version: "0.1",
      entity: "acme.example",
      max_delegation_depth: 2,
    });
  });

  it("verify --json prints the §6.7 object and exits 0 for a valid credential", async () => {
    const { cred, doc } = await setup();
    const v = await runCli(
      "identity",
      "verify",
      cred,
      "--discovery",
      doc,
      "--audience",
      "v.example",
      "--json",
    );
    expect(v.code).toBe(0);
    expect(json(v.out)).toMatchObject({
      valid: true,
      error_code: null,
      agent_id: "urn:agentpin:acme.example:bot",
      capabilities: ["read:data"],
      delegation_verified: null,
      key_pinning: { status: "first_use" },
    });
  });

  it("verify exits 1 with the code for a credential past its lifetime (--now injects the clock)", async () => {
    const { cred, doc } = await setup();
    const later = String(Math.floor(Date.now() / 1000) + 3600);
    const v = await runCli("identity", "verify", cred, "--discovery", doc, "--now", later, "--json");
    expect(v.code).toBe(1);
    expect(json(v.out)).toMatchObject({ valid: false, error_code: "CREDENTIAL_EXPIRED", agent_id: null });
  });

  it("verify exits 1 for another audience and 2 for bad usage", async () => {
    const { cred, doc } = await setup();
    const wrong = await runCli(
      "identity",
      "verify",
      cred,
      "--discovery",
      doc,
      "--audience",
      "x.example",
      "--json",
    );
    expect([wrong.code, json(wrong.out).error_code]).toEqual([1, "AUDIENCE_MISMATCH"]);
    expect((await runCli("identity", "verify", cred)).code).toBe(2);
    expect((await runCli("identity", "verify", cred, "--discovery", doc, "--now", "yesterday")).code).toBe(2);
    expect((await runCli("identity", "verify", cred, "--discovery", doc, "--skew", "100000")).code).toBe(2);
    expect((await runCli("identity", "verify", join(tmp(), "missing.jwt"), "--discovery", doc)).code).toBe(2);
  });

  it("--update-pins pins on first use; a rotated key is then KEY_PIN_MISMATCH until `identity pin`", async () => {
    const a = await setup();
    const pins = join(tmp(), "pins.json");
    expect(
      (await runCli("identity", "verify", a.cred, "--discovery", a.doc, "--pins", pins, "--update-pins"))
        .code,
    ).toBe(0);
    const stored = JSON.parse(readFileSync(pins, "utf8")) as { domain: string }[];
    expect(stored.map((d) => d.domain)).toEqual(["acme.example"]);
    const b = await setup(); // same domain, new key
    const v = await runCli("identity", "verify", b.cred, "--discovery", b.doc, "--pins", pins, "--json");
    expect([v.code, json(v.out).error_code]).toEqual([1, "KEY_PIN_MISMATCH"]);
    const kid = (json(readFileSync(b.doc, "utf8")).public_keys as { kid: string }[])[0]?.kid as string;
    expect((await runCli("identity", "pin", "--discovery", b.doc, "--kid", kid, "--pins", pins)).code).toBe(
      0,
    );
    expect((await runCli("identity", "verify", b.cred, "--discovery", b.doc, "--pins", pins)).code).toBe(0);
  });

  it("a failed verification never writes the pin store, even with --update-pins", async () => {
    const { cred, doc } = await setup();
    const pins = join(tmp(), "pins.json");
    const v = await runCli(
      "identity",
      "verify",
      cred,
      "--discovery",
      doc,
      "--audience",
      "x.example",
      "--pins",
      pins,
      "--update-pins",
    );
    expect(v.code).toBe(1);
    expect(() => statSync(pins)).toThrow();
  });

  it("verify --revocation: a revoked credential exits 1 with CREDENTIAL_REVOKED", async () => {
    const { cred, doc } = await setup();
    const claims = JSON.parse(
      Buffer.from(readFileSync(cred, "utf8").split(".")[1] as string, "base64url").toString(),
    );
    const rev = join(tmp(), "rev.json");
    writeFileSync(
      rev,
      JSON.stringify({
        agentpin_version: "0.1",
        entity: "acme.example",
        updated_at: "2026-01-01T00:00:00Z",
        revoked_credentials: [
          { jti: claims.jti, revoked_at: "2026-01-01T00:00:00Z", reason: "key_compromise" },
        ],
      }),
    );
    const v = await runCli("identity", "verify", cred, "--discovery", doc, "--revocation", rev, "--json");
    expect([v.code, json(v.out).error_code]).toEqual([1, "CREDENTIAL_REVOKED"]);
  });

  it("verify resolves the issuer through a trust bundle", async () => {
    const { cred, doc } = await setup();
    const bundle = join(tmp(), "bundle.json");
    writeFileSync(
      bundle,
      JSON.stringify({
        agentpin_bundle_version: "0.1",
        created_at: "2026-01-01T00:00:00Z",
        documents: [json(readFileSync(doc, "utf8"))],
        revocations: [],
      }),
    );
    expect((await runCli("identity", "verify", cred, "--bundle", bundle)).code).toBe(0);
    const empty = join(tmp(), "empty.json");
    writeFileSync(
      empty,
      JSON.stringify({ agentpin_bundle_version: "0.1", created_at: "2026-01-01T00:00:00Z", documents: [] }),
    );
    const v = await runCli("identity", "verify", cred, "--bundle", empty, "--json");
    expect([v.code, json(v.out).error_code]).toEqual([1, "DISCOVERY_FETCH_FAILED"]);
  });

  it("issue refuses an agent the discovery document does not declare, and a bad --ttl", async () => {
    const { dir } = await setup();
    expect(
      (
        await runCli(
          "identity",
          "issue",
          "--dir",
          dir,
          "--agent",
          "ghost",
          "--capabilities",
          "read:data",
          "--ttl",
          "15m",
        )
      ).code,
    ).toBe(2);
    expect(
      (
        await runCli(
          "identity",
          "issue",
          "--dir",
          dir,
          "--agent",
          "bot",
          "--capabilities",
          "read:data",
          "--ttl",
          "2d",
        )
      ).code,
    ).toBe(2);
  });

  it("init refuses a Unicode look-alike domain", async () => {
    expect((await runCli("identity", "init", "--domain", "\u0430cme.example", "--out", tmp())).code).toBe(2);
  });
});
