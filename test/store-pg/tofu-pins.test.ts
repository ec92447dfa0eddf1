// SchemaPin contract-key pins shared by every replica (distributed mode), on one real
// PostgreSQL, each replica a real composeRuntime over `store: {kind: postgres}` with its
// own contract directory: written as key substitutions on a fleet. The hook source pins
// are in tofu-pins-hooks.test.ts.
import { appendFileSync, cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fingerprintOf, generateKeyPair, type KeyPair, saveKeyPair } from "../../src/crypto/index.js";
import { composeRuntime, type Runtime } from "../../src/runtime/index.js";
import { migrate, PgTofuPins } from "../../src/store-pg/index.js";
import {
  ContractLoadRefusedError,
  loadContract,
  loadContractsShared,
  TrustStore,
} from "../../src/tools/index.js";
import { signContractFile } from "../../src/tools/integrity/index.js";
import { runCli } from "../helpers/cli.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { freshDatabase, poolOf } from "./helpers.js";

const POLICY = `
rules:
  - { id: writes, name: writes, priority: 100, match: { toolClass: file, action: write }, decision: allow, reason: w }
`;
const whois = readFileSync(new URL("../tools/fixtures/whois_lookup.clad.toml", import.meta.url), "utf8");
const DOMAIN = "tools.example";
const JOURNAL_KEY = generateKeyPair("ed25519");
const PUBLISHER = generateKeyPair("p256");
const ATTACKER = generateKeyPair("p256");
const pem = (k: KeyPair) => k.publicKey.export({ type: "spki", format: "pem" }).toString();
const fp = (k: KeyPair) => fingerprintOf(k.publicKey);

let server: PostgresServer;
let url: string;
let pool: pg.Pool;
const open: Runtime[] = [];

beforeAll(async () => {
  server = await startPostgres();
  url = await freshDatabase(server.connectionString);
  pool = poolOf(url, 4);
  await migrate(pool);
}, 120_000);

afterAll(async () => {
  for (const rt of open) await rt.close();
  await pool?.end();
  await server?.stop();
});

/** A contract directory holding `tool`, signed by `key` for DOMAIN. */
function contracts(tool: string, key: KeyPair): string {
  const dir = mkdtempSync(join(tmpdir(), "warden-tofu-contracts-"));
  const file = join(dir, `${tool}.clad.toml`);
  writeFileSync(file, whois.replace('name = "whois_lookup"', `name = "${tool}"`));
  const loaded = loadContract(file);
  if (!loaded.ok) throw new Error(loaded.message);
  signContractFile(loaded.tool.contract, file, { privateKey: key.privateKey, domain: DOMAIN });
  return dir;
}

/**
 * One replica over the shared store, loading `dir`; both keys are trusted publishers, so
 * only the pin tells the tool's own key from another trusted one.
 */
async function replica(node: string, dir: string, trust: Record<string, unknown> = {}): Promise<Runtime> {
  const home = mkdtempSync(join(tmpdir(), `warden-tofu-${node}-`));
  writeFileSync(join(home, "policy.yaml"), POLICY);
  const rt = await composeRuntime({
    policy: [join(home, "policy.yaml")],
    journal: { path: join(home, "journal.db"), signer: JOURNAL_KEY },
    gate: { principals: { "agent-1": { id: "agent-1", roles: ["agent"] } }, requireContract: false },
    contracts: {
      dir,
      baseDir: home,
      trust: { mode: "enforce", keys: [pem(PUBLISHER), pem(ATTACKER)], ...trust },
    },
    store: { kind: "postgres", url, node, pool: { max: 2 } },
  });
  open.push(rt);
  return rt;
}

/** The replica's start refusal: the load's error and the codes of its refused manifests. */
async function refusal(start: Promise<Runtime>): Promise<{ code: string; refused: string[] }> {
  const err = await start.then(
    (rt) => {
      throw new Error(`the replica started with ${rt.contracts?.names().join(", ")}`);
    },
    (e: unknown) => e,
  );
  if (!(err instanceof ContractLoadRefusedError)) throw err;
  return { code: err.code, refused: err.refused.map((r) => r.code) };
}

/** The `warden.contract.*` entries `node` journaled in the shared journal. */
async function contractEvents(node: string): Promise<{ type: string; body: Record<string, unknown> }[]> {
  const r = await pool.query<{ type: string; body: string }>(
    "SELECT type, body FROM journal_entries WHERE node = $1 AND type LIKE 'warden.contract.%' ORDER BY seq",
    [node],
  );
  return r.rows.map((row) => ({ type: row.type, body: JSON.parse(row.body) as Record<string, unknown> }));
}

const pinOf = async (tool: string) =>
  (await new PgTofuPins(pool).get("schemapin", tool, DOMAIN))?.fingerprint;

describe("SchemaPin contract-key pins across replicas", () => {
  it("a tool re-signed by an attacker's key on replica B after A pinned the publisher's is refused on B and on C started later", async () => {
    const a = await replica("key-a", contracts("whois_lookup", PUBLISHER));
    expect(a.contracts?.names()).toEqual(["whois_lookup"]);
    expect(await pinOf("whois_lookup")).toBe(fp(PUBLISHER));

    const forged = contracts("whois_lookup", ATTACKER);
    const onB = await refusal(replica("key-b", forged));
    expect(onB).toEqual({
      code: "ERR_TOOL_REGISTRY_UNVERIFIED",
      refused: ["ERR_INTEGRITY_KEY_PIN_MISMATCH"],
    });
    // Journaled on B like a changed key on one node, before the start failed.
    const events = await contractEvents("key-b");
    expect(events.map((e) => e.type)).toEqual(["warden.contract.refused"]);
    expect(events[0]?.body).toMatchObject({ tool: "whois_lookup", code: "ERR_INTEGRITY_KEY_PIN_MISMATCH" });

    const onC = await refusal(replica("key-c", forged));
    expect(onC.refused).toEqual(["ERR_INTEGRITY_KEY_PIN_MISMATCH"]);
    expect(await pinOf("whois_lookup")).toBe(fp(PUBLISHER));
    // The genuine contract still loads everywhere, as pinned.
    const d = await replica("key-d", contracts("whois_lookup", PUBLISHER));
    expect(d.contracts?.names()).toEqual(["whois_lookup"]);
    expect((await contractEvents("key-d"))[0]?.body).toMatchObject({ pin: "pinned" });
  });

  it("two replicas loading one tool signed by different keys at once: one key is pinned, the other replica refuses", async () => {
    const genuine = contracts("race_tool", PUBLISHER);
    const forged = contracts("race_tool", ATTACKER);
    const starts = await Promise.allSettled([replica("race-a", genuine), replica("race-b", forged)]);
    const started = starts.filter((s) => s.status === "fulfilled");
    const refused = starts.flatMap((s) =>
      s.status === "rejected" ? [s.reason as ContractLoadRefusedError] : [],
    );
    expect(started).toHaveLength(1);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toBeInstanceOf(ContractLoadRefusedError);
    expect(refused[0]?.refused.map((r) => r.code)).toEqual(["ERR_INTEGRITY_KEY_PIN_MISMATCH"]);
    const winner = starts[0]?.status === "fulfilled" ? PUBLISHER : ATTACKER;
    expect(await pinOf("race_tool")).toBe(fp(winner));
    // Whoever lost, a replica started afterwards with the loser's key refuses it too.
    const loserDir = winner === PUBLISHER ? forged : genuine;
    expect((await refusal(replica("race-c", loserDir))).refused).toEqual(["ERR_INTEGRITY_KEY_PIN_MISMATCH"]);
  });

  it("an operator's re-pin is used by every replica started afterwards, and the old key is refused", async () => {
    await replica("repin-a", contracts("rotated", PUBLISHER));
    const rotated = contracts("rotated", ATTACKER);
    expect((await refusal(replica("repin-b", rotated))).refused).toEqual(["ERR_INTEGRITY_KEY_PIN_MISMATCH"]);
    const repin = await runCli(
      ...["db", "repin", "--url", url, "--kind", "schemapin", "--tool", "rotated"],
      ...["--domain", DOMAIN, "--fingerprint", fp(ATTACKER)],
    );
    expect(repin).toMatchObject({ code: 0, err: "" });
    expect(repin.out).toContain(`(was ${fp(PUBLISHER)})`);
    const listed = await runCli("db", "pins", "--url", url, "--kind", "schemapin", "--json");
    expect(JSON.parse(listed.out)).toContainEqual(
      expect.objectContaining({ toolId: "rotated", domain: DOMAIN, fingerprint: fp(ATTACKER) }),
    );
    for (const node of ["repin-c", "repin-d"]) {
      const rt = await replica(node, rotated);
      expect(rt.contracts?.names()).toEqual(["rotated"]);
    }
    const old = await refusal(replica("repin-e", contracts("rotated", PUBLISHER)));
    expect(old.refused).toEqual(["ERR_INTEGRITY_KEY_PIN_MISMATCH"]);
  });

  it("a replica that read the pins just before another pinned a different key loads again and refuses its own", async () => {
    const pins = new PgTofuPins(pool);
    const stale = await pins.load("schemapin");
    await replica("stale-a", contracts("late_tool", PUBLISHER));
    // B's read happened before A's pin committed: its check says first use, the table says otherwise.
    const port = {
      load: async () => [...stale],
      pinFirst: (e: Parameters<PgTofuPins["pinFirst"]>[1]) => pins.pinFirst("schemapin", e),
    };
    const trust = TrustStore.fromConfig({ mode: "enforce", keys: [pem(PUBLISHER), pem(ATTACKER)] });
    const err = await loadContractsShared(contracts("late_tool", ATTACKER), trust, port).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ContractLoadRefusedError);
    expect((err as ContractLoadRefusedError).refused.map((r) => r.code)).toEqual([
      "ERR_INTEGRITY_KEY_PIN_MISMATCH",
    ]);
    expect(await pinOf("late_tool")).toBe(fp(PUBLISHER));
  });

  it("a re-pin with a malformed fingerprint or an unknown kind is a usage error and changes nothing", async () => {
    await replica("usage-a", contracts("guarded", PUBLISHER));
    const base = ["db", "repin", "--url", url, "--tool", "guarded", "--domain", DOMAIN];
    const bad = await runCli(...base, "--kind", "schemapin", "--fingerprint", "sha256:xyz");
    const kind = await runCli(...base, "--kind", "agentpin", "--fingerprint", fp(ATTACKER));
    for (const r of [bad, kind]) {
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/ERR_CLI_USAGE/);
    }
    expect(await pinOf("guarded")).toBe(fp(PUBLISHER));
  });

  it("sidecar --check names the node-local pin files a replica would refuse beside the shared store", async () => {
    const dir = mkdtempSync(join(tmpdir(), "warden-tofu-deploy-"));
    cpSync(new URL("../../deploy", import.meta.url), dir, { recursive: true });
    saveKeyPair(JOURNAL_KEY, join(dir, "keys"), { name: "journal" });
    appendFileSync(
      join(dir, "sidecar.yaml"),
      "\ntrust:\n  pins: state/contract-pins.json\nhooks:\n  sourcePins: state/source-pins.json\n",
    );
    process.env.WARDEN_DB_URL = url;
    try {
      const r = await runCli("sidecar", "--config", join(dir, "sidecar.yaml"), "--check", "--json");
      expect(r.code).toBe(2);
      const problems = (JSON.parse(r.out) as { problems: { what: string }[] }).problems.map((p) => p.what);
      expect(problems).toEqual(["trust.pins", "hooks.sourcePins"]);
    } finally {
      delete process.env.WARDEN_DB_URL;
    }
  });

  it("a node-local pins file beside the shared store is refused at start", async () => {
    const start = replica("file-a", contracts("filed", PUBLISHER), { pins: "pins.json" });
    await expect(start).rejects.toMatchObject({ code: "ERR_INTEGRITY_TRUST_CONFIG" });
    expect(await pinOf("filed")).toBeUndefined();
    // Also in mode off, where the file would silently never be read.
    const off = replica("file-b", contracts("filed", PUBLISHER), { mode: "off", pins: "pins.json" });
    await expect(off).rejects.toMatchObject({ code: "ERR_INTEGRITY_TRUST_CONFIG" });
  });

  it("a first use is not pinned when the load is refused for another manifest", async () => {
    const dir = contracts("kept_out", PUBLISHER);
    writeFileSync(
      join(dir, "unsigned.clad.toml"),
      whois.replace('name = "whois_lookup"', 'name = "unsigned"'),
    );
    const r = await refusal(replica("partial-a", dir));
    expect(r.refused).toEqual(["ERR_INTEGRITY_UNSIGNED"]);
    expect(await pinOf("kept_out")).toBeUndefined();
  });
});
