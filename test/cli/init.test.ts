// `warden init`: a starter deployment that works with no other step. The sidecar is
// started from the written configuration on an ephemeral loopback port, the printed
// token and the printed call body make a governed /v1/execute call (allowed, executed,
// journaled), the attacks are denied, and `warden journal verify` passes afterwards.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { InitResult } from "../../src/cli/commands/init.js";
import { loadSidecarConfig, openSidecarRuntime, startSidecar } from "../../src/server/index.js";
import { runCli } from "../helpers/cli.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), "warden-init-"));
  dirs.push(d);
  return d;
}
const mode = (p: string) => statSync(p).mode & 0o777;

async function init(dir: string, ...flags: string[]): Promise<InitResult> {
  const r = await runCli("init", dir, "--json", ...flags);
  expect(r.err).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.out) as InitResult;
}

/** Every file under `dir`, recursively. */
function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

describe("warden init: from nothing to a governed call", () => {
  it("starts a sidecar from the written config; the printed token and call are allowed and journaled; the journal verifies", async () => {
    const dep = join(tmp(), "my-deployment");
    const res = await init(dep);
    expect(statSync(join(dep, "keys")).isDirectory()).toBe(true);
    expect(mode(join(dep, "keys"))).toBe(0o700);
    expect(mode(join(dep, "keys", "journal.pem"))).toBe(0o600);
    expect(mode(join(dep, "keys", "journal.jwk.json"))).toBe(0o600);

    const server = await startSidecar(await openSidecarRuntime(loadSidecarConfig(res.config)), { port: 0 });
    const call = async (path: string, body: unknown, token = res.tokens.agent) => {
      const r = await fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
      return { status: r.status, body: (await r.json()) as Record<string, unknown> };
    };
    const startRun = async () => {
      const r = await fetch(`${server.url}/v1/runs`, {
        method: "POST",
        headers: { authorization: `Bearer ${res.tokens.agent}` },
      });
      return ((await r.json()) as { runId: string }).runId;
    };
    try {
      // The printed commands: a run from POST /v1/runs, then the curl body with that run.
      expect(res.next.some((l) => l.includes("/v1/runs") && l.startsWith("WARDEN_RUN="))).toBe(true);
      const runId = await startRun();
      const line = (res.next.find((l) => l.includes("/v1/execute")) ?? "").replace(`'"$WARDEN_RUN"'`, runId);
      const printed = /-d '([^']+)'/.exec(line);
      expect(printed).not.toBeNull();
      const ok = await call("/v1/execute", (printed as RegExpExecArray)[1] as string);
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({
        decision: "allow",
        result: { ok: true, output: { raw_output: "hello from my agent\n" } },
      });
      const wc = await call("/v1/execute", {
        runId: await startRun(),
        tool: "word_count",
        parameters: { path: "hello.txt" },
      });
      expect(wc.body).toMatchObject({ decision: "allow", result: { ok: true } });

      const denied = await call("/v1/execute", {
        runId: await startRun(),
        tool: "echo",
        parameters: { message: "rm -rf /" },
      });
      expect(denied.body).toMatchObject({ decision: "deny", reasonCodes: ["DESTRUCTIVE"] });
      expect(denied.body.result).toBeUndefined();
      const seqs = [...(ok.body.journalSeqs as number[]), ...(denied.body.journalSeqs as number[])];
      expect(seqs.length).toBeGreaterThanOrEqual(2);
      // The console is on in an init deployment, and the printed operator token signs in.
      const signIn = await fetch(`${server.url}/console/sign-in`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token: res.tokens.operator }).toString(),
        redirect: "manual",
      });
      expect(signIn.status).toBe(303);
      expect(signIn.headers.get("content-security-policy")).toContain("default-src 'none'");
    } finally {
      await server.close();
    }
    expect(mode(join(dep, "journal.db"))).toBe(0o600);
    const verify = await runCli(
      "journal",
      "verify",
      "--db",
      join(dep, "journal.db"),
      "--keys",
      res.publicKey,
    );
    expect(verify.code).toBe(0);
    expect(verify.out).toMatch(/intact/);
  });

  it("an agent cannot reach the journal key through the starter tools, nor call without a contract", async () => {
    const res = await init(join(tmp(), "d"));
    const server = await startSidecar(await openSidecarRuntime(loadSidecarConfig(res.config)), { port: 0 });
    const call = async (path: string, body: unknown) => {
      const r = await fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${res.tokens.agent}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return (await r.json()) as Record<string, unknown>;
    };
    try {
      const runId = (
        (await (
          await fetch(`${server.url}/v1/runs`, {
            method: "POST",
            headers: { authorization: `Bearer ${res.tokens.agent}` },
          })
        ).json()) as { runId: string }
      ).runId;
      for (const path of ["../keys/journal.pem", "/etc/passwd"]) {
        const r = await call("/v1/execute", { runId, tool: "word_count", parameters: { path } });
        expect(r.decision).toBe("deny");
        expect(r.result).toBeUndefined();
      }
      const noContract = await call("/v1/decide", {
        runId,
        toolClass: "shell",
        action: "exec",
        parameters: { message: "hi" },
      });
      expect(noContract).toMatchObject({ decision: "deny", reasonCodes: ["contract_required"] });
    } finally {
      await server.close();
    }
  });

  it("signs the starter contracts and enforces it: a tampered starter contract stops the sidecar from starting", async () => {
    const dep = join(tmp(), "signed");
    const res = await init(dep);
    expect(mode(join(dep, "keys", "contracts.pem"))).toBe(0o600);
    expect(readFileSync(res.config, "utf8")).toMatch(/trust:\n {2}mode: enforce/);
    const check = await runCli("sidecar", "--config", res.config, "--check", "--json");
    expect(check.code).toBe(0);
    expect(JSON.parse(check.out).summary.trust).toMatchObject({ mode: "enforce", keys: 1 });
    expect((await runCli("sidecar", "--config", res.config, "--check")).out).toMatch(
      /trust {8}enforce \(1 key/,
    );

    // The attack: widen what the echo tool may print (max_length 200 -> 20000) after signing.
    const file = join(dep, "contracts", "echo.clad.toml");
    const original = readFileSync(file, "utf8");
    const tampered = original.replace("max_length = 200", "max_length = 20000");
    expect(tampered).not.toBe(original);
    writeFileSync(file, tampered);
    await expect(openSidecarRuntime(loadSidecarConfig(res.config))).rejects.toMatchObject({
      code: "ERR_TOOL_REGISTRY_UNVERIFIED",
    });
    const start = await runCli("sidecar", "--config", res.config, "--port", "0");
    expect(start.code).toBe(2);
    expect(start.err).toContain("ERR_TOOL_REGISTRY_UNVERIFIED");
    const checked = await runCli("sidecar", "--config", res.config, "--check");
    expect(checked.code).toBe(2);
    expect(checked.err).toContain("ERR_TOOL_REGISTRY_UNVERIFIED");
  });

  it("prints each token once, stores neither, and prints the exact next commands", async () => {
    const dep = join(tmp(), "human");
    const r = await runCli("init", dep, "--port", "18080");
    expect(r.code).toBe(0);
    const agent = /agent {5}(wdn_[A-Za-z0-9_-]{43})/.exec(r.out)?.[1] as string;
    const operator = /operator {2}(wdn_[A-Za-z0-9_-]{43})/.exec(r.out)?.[1] as string;
    expect(agent).toBeDefined();
    expect(operator).toBeDefined();
    expect(r.out.split(agent).length - 1).toBe(2); // the token line and the export line
    expect(r.out).toContain(`export WARDEN_TOKEN=${agent}`);
    expect(r.out).toMatch(/warden sidecar --config \S*human\/sidecar\.yaml &/);
    expect(r.out).toContain("http://127.0.0.1:18080/v1/execute");
    expect(r.out).toMatch(
      /warden journal verify --db \S*human\/journal\.db --keys \S*human\/keys\/journal\.pub\.pem/,
    );
    for (const f of files(dep)) {
      const text = readFileSync(f, "utf8");
      expect(text).not.toContain(agent);
      expect(text).not.toContain(operator);
    }
    expect(readFileSync(join(dep, "sidecar.yaml"), "utf8")).toMatch(/port: 18080/);
  });

  it("--shell prints only comments and the two token exports (for eval)", async () => {
    const r = await runCli("init", join(tmp(), "sh"), "--shell");
    expect(r.code).toBe(0);
    const lines = r.out.trimEnd().split("\n");
    const code = lines.filter((l) => !l.startsWith("#"));
    expect(code).toHaveLength(2);
    expect(code[0]).toMatch(/^export WARDEN_TOKEN=wdn_[A-Za-z0-9_-]{43}$/);
    expect(code[1]).toMatch(/^export WARDEN_OPERATOR_TOKEN=wdn_[A-Za-z0-9_-]{43}$/);
  });
});

describe("warden init: refusals", () => {
  it("refuses a non-empty directory (ERR_CLI_INIT_NOT_EMPTY) and writes nothing there", async () => {
    const d = tmp();
    writeFileSync(join(d, "mine.txt"), "keep me");
    const r = await runCli("init", d);
    expect(r.code).toBe(2);
    expect(r.err).toContain("ERR_CLI_INIT_NOT_EMPTY");
    expect(readdirSync(d)).toEqual(["mine.txt"]);
  });

  it("--force rewrites the starter files with new tokens but keeps the existing journal key", async () => {
    const d = join(tmp(), "f");
    const first = await init(d);
    const again = await init(d, "--force");
    expect(again.keyCreated).toBe(false);
    expect(again.keyId).toBe(first.keyId);
    expect(again.tokens.agent).not.toBe(first.tokens.agent);
    expect(mode(join(d, "keys", "journal.pem"))).toBe(0o600);
  });

  it("refuses a bad --port and a path that is a file", async () => {
    const d = tmp();
    expect((await runCli("init", join(d, "x"), "--port", "99999")).code).toBe(2);
    writeFileSync(join(d, "file"), "");
    const r = await runCli("init", join(d, "file"));
    expect(r.code).toBe(2);
    expect(r.err).toContain("ERR_CLI_USAGE");
  });
});
