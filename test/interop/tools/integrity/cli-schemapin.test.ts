// `warden contract verify` on the SchemaPin project's own fixtures: JS and Python
// double-hash, Go single-hash, the signed trust bundle, and a discovery document
// served over loopback HTTP.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../../helpers/cli.js";
import { type RouteServer, startRouteServer } from "../../../helpers/route-server.js";
import { tempDir } from "../../../tools/integrity/helpers.js";
import { schemapinVector as vector } from "./schemapin-fixtures.js";

describe("warden contract verify (SchemaPin documents)", () => {
  it.each(["js", "python"])("verifies the %s signed-schema fixture (double hash)", async (f) => {
    const v = await runCli(
      "contract",
      "verify",
      vector(f, "demo_schema_signed.json"),
      "--well-known",
      vector(f, "demo_well_known.json"),
    );
    expect(v).toMatchObject({ code: 0, err: "" });
    expect(v.out).toContain("double-hash");
  });

  it("the go fixture verifies only with --single-hash", async () => {
    const args = [
      "contract",
      "verify",
      vector("go", "demo_schema_signed.json"),
      "--well-known",
      vector("go", "demo_well_known.json"),
    ];
    const plain = await runCli(...args);
    expect(plain.code).toBe(1);
    expect(plain.err).toContain("ERR_INTEGRITY_SIGNATURE_INVALID");
    expect((await runCli(...args, "--single-hash")).code).toBe(0);
  });

  it("verifies the signed trust bundle fixture; a tampered copy fails", async () => {
    expect((await runCli("contract", "verify", vector("bundle", "signed_bundle.json"))).code).toBe(0);
    const tampered = join(tempDir(), "bundle.json");
    const b = JSON.parse(readFileSync(vector("bundle", "signed_bundle.json"), "utf8"));
    b.expires_at = "2099-01-02T00:00:00Z";
    writeFileSync(tampered, JSON.stringify(b));
    const v = await runCli("contract", "verify", tampered, "--json");
    expect(v.code).toBe(1);
    expect(JSON.parse(v.out)).toMatchObject({ verified: false, code: "ERR_INTEGRITY_SIGNATURE_INVALID" });
  });

  it("pinning a signed schema needs a domain (exit 2)", async () => {
    const v = await runCli(
      "contract",
      "verify",
      vector("js", "demo_schema_signed.json"),
      "--well-known",
      vector("js", "demo_well_known.json"),
      "--pins",
      join(tempDir(), "p.json"),
    );
    expect(v.code).toBe(2);
    expect(v.err).toContain("ERR_CLI_USAGE");
  });
});

describe("warden contract verify --well-known URL (SchemaPin fixture)", () => {
  let srv: RouteServer;
  let base: string;
  let routes: Map<string, string>;

  beforeAll(async () => {
    srv = await startRouteServer();
    ({ base, routes } = srv);
  });
  afterAll(() => srv.close());

  it("fetches the discovery document from a loopback server only with --allow-loopback-http", async () => {
    routes.set("/.well-known/schemapin.json", readFileSync(vector("js", "demo_well_known.json"), "utf8"));
    const doc = vector("js", "demo_schema_signed.json");
    const refused = await runCli("contract", "verify", doc, "--well-known", base);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain("ERR_INTEGRITY_FETCH");
    const ok = await runCli(
      "contract",
      "verify",
      doc,
      "--well-known",
      base,
      "--allow-loopback-http",
      "--pins",
      join(tempDir(), "p.json"),
    );
    expect(ok.code).toBe(0);
    expect(ok.out).toContain("calculate_sum (127.0.0.1)");
  });
});
