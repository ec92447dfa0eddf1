// The CLI a person meets, through the built binary (`npm run build`, bin/warden.js): the root
// help grouped by task with an example per group and the acronyms spelled out; bare `warden`
// prints it and succeeds; a port another process holds and a missing key file end with a
// hint naming the next command (and that command works); commands that write a file say so.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SUMMARY } from "../../src/cli/commands/summaries.js";
import { ACRONYMS, HELP_GROUPS } from "../../src/cli/help.js";
import { REPO_ROOT } from "../helpers/repo.js";

const BIN = join(REPO_ROOT, "bin", "warden.js");
const GROUPS = [
  "Get started",
  "Run agents",
  "Hosts and gateways",
  "Audit and evidence",
  "Identity and trust",
  "Operations",
  "Low level",
];

function warden(args: string[], cwd = REPO_ROOT) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: "utf8", timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

let dir = "";
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "warden-person-"));
});
afterAll(() => {
  if (dir !== "") rmSync(dir, { recursive: true, force: true });
});

describe("warden --help, grouped by task", () => {
  it("bare `warden` prints the help and exits 0 (it used to exit 2)", () => {
    const bare = warden([]);
    expect(bare.code).toBe(0);
    expect(bare.out).toBe(warden(["--help"]).out);
    expect(bare.err).toBe("");
  });

  it("lists the seven task groups in order, each with an example, every command once", () => {
    const out = warden(["--help"]).out;
    const lines = out.split("\n");
    const at = GROUPS.map((g) => lines.indexOf(g));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(HELP_GROUPS.map((g) => g.title)).toEqual(GROUPS);
    for (const g of HELP_GROUPS) expect(out).toContain(`  e.g. ${g.example}\n`);
    const listed = HELP_GROUPS.flatMap((g) => g.commands);
    expect([...listed].sort()).toEqual(Object.keys(SUMMARY).sort());
    for (const name of Object.keys(SUMMARY)) {
      expect(lines.filter((l) => l.startsWith(`  ${name} `)).length, name).toBe(1);
    }
  });

  it("one line per command (no line over 100 columns) and every acronym explained", () => {
    const out = warden(["--help"]).out;
    for (const line of out.split("\n")) expect(line.length, line).toBeLessThanOrEqual(100);
    const terms = ACRONYMS.map(([t]) => t);
    for (const acronym of ["AARTS", "APAE", "MCP", "DARE", "GATE", "ECT", "OATS", "AgentPin", "RFC 8785"]) {
      expect(
        terms.some((t) => t.split("/").includes(acronym)),
        acronym,
      ).toBe(true);
    }
    for (const [term] of ACRONYMS) expect(out).toMatch(new RegExp(`^  ${term.replace(/[/]/g, "\\/")} `, "m"));
  });
});

describe("hints on common errors", () => {
  let server: Server;
  let port = 0;
  beforeAll(async () => {
    server = createServer();
    await new Promise<void>((res) => server.listen(0, "127.0.0.1", () => res()));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((res) => server.close(() => res())));

  it("a port another process holds: the sidecar says to pass --port, and does not start", () => {
    const deployment = join(dir, "deployment");
    expect(warden(["init", deployment], dir).code).toBe(0);
    const r = warden(["sidecar", "--config", join(deployment, "sidecar.yaml"), "--port", String(port)], dir);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/EADDRINUSE/);
    expect(r.err).toMatch(new RegExp(`hint: port ${port} is already in use.*--port`));
  });

  it("a missing key file: the hint is the exact command that creates it, and that command works", () => {
    const contract = join(REPO_ROOT, "examples", "conformance", "contracts", "echo.clad.toml");
    const keyDir = join(dir, "missing-keys");
    const sign = [
      "contract",
      "sign",
      contract,
      "--key",
      join(keyDir, "publisher.pem"),
      "--domain",
      "tools.example",
    ];
    const first = warden(sign, dir);
    expect(first.code).toBe(2);
    const hint = /create it with: (warden keys generate [^\n]+)\n/.exec(first.err);
    expect(hint?.[1]).toBe(`warden keys generate --type p256 --out ${keyDir} --name publisher`);
    const made = warden((hint?.[1] ?? "").split(" ").slice(1), dir);
    expect(made.code, made.err).toBe(0);
    expect(existsSync(join(keyDir, "publisher.pem"))).toBe(true);
  });
});

describe("commands that write a file say what they wrote", () => {
  it("keys generate, journal export --out, journal head --out, export --out", () => {
    const keys = warden([
      "keys",
      "generate",
      "--type",
      "ed25519",
      "--out",
      join(dir, "k"),
      "--name",
      "journal",
    ]);
    expect(keys.out).toContain(join(dir, "k", "journal.pem"));
    const db = join(dir, "journal.db");
    const key = join(dir, "k", "journal.pem");
    const append = ["journal", "append", "--db", db, "--key", key, "--type", "ObservationsCollected"];
    expect(warden([...append, "--body", '{"observation_count":1}']).code).toBe(0);
    const jsonl = join(dir, "journal.jsonl");
    const exported = warden(["journal", "export", "--db", db, "--format", "jsonl", "--out", jsonl]);
    expect(exported.out).toBe(`wrote ${jsonl} (0600): the journal as JSONL\n`);
    const head = join(dir, "head.json");
    const signed = warden(["journal", "head", "--db", db, "--key", key, "--out", head]);
    expect(signed.code).toBe(0);
    expect(signed.err).toBe(`wrote ${head}: the signed head\n`);
    const gate = join(dir, "gate.jsonl");
    const pub = join(dir, "k", "journal.pub.pem");
    const ev = warden([
      "export",
      "--journal",
      db,
      "--keys",
      pub,
      "--format",
      "ocsf",
      "--out",
      gate,
      "--from",
      "2000-01-01T00:00:00Z",
      "--to",
      "2999-01-01T00:00:00Z",
    ]);
    expect(ev.code, ev.err).toBe(0);
    expect(ev.out).toMatch(
      new RegExp(`^wrote ${gate.replace(/[.]/g, "\\.")} \\(0600\\): \\d+ ocsf records\\n$`),
    );
  });

  it("identity issue --out names the file and the agent (it used to print nothing)", () => {
    const id = join(dir, "identity");
    const init = ["identity", "init", "--domain", "acme.example", "--out", id, "--agent", "bot"];
    expect(warden([...init, "--capabilities", "read:data"]).code).toBe(0);
    const cred = join(id, "bot.jwt");
    const issue = ["identity", "issue", "--dir", id, "--agent", "bot", "--capabilities", "read:data"];
    const r = warden([...issue, "--ttl", "15m", "--audience", "v.example", "--out", cred]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe(
      `wrote ${cred} (0600): AgentPin credential for urn:agentpin:acme.example:bot, valid 15m\n`,
    );
    expect(existsSync(cred)).toBe(true);
  });
});
