// Just-in-time secrets as attacks, end to end through the composed runtime and a real
// loopback server that echoes the secret back in every spelling: the value is fetched per
// call from its provider (named by the call), sent, and then found nowhere — not in the
// journal file (WAL included), not in the evidence, not in the session context, not in
// the output the agent reads. A missing provider or secret fails the call closed.
import { once } from "node:events";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPair } from "../../src/crypto/index.js";
import {
  bindingForContract,
  EnvSecretProvider,
  HttpExecutor,
  type SecretProvider,
  type SecretRequest,
} from "../../src/executors/index.js";
import { ticketOf } from "../../src/gate/index.js";
import { composeRuntime, type Runtime } from "../../src/runtime/index.js";
import { type CompiledTool, parseContract } from "../../src/tools/index.js";

const SECRET = 'jit-Sk-9f/"v a l"+7';
let server: http.Server;
let port = 0;
const received: string[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const token = String(req.headers["x-api-key"] ?? "");
    received.push(token);
    res.writeHead(200, { "content-type": "application/json", "x-echo": token });
    res.end(
      JSON.stringify({
        echoed: token,
        b64: Buffer.from(token).toString("base64"),
        pct: encodeURIComponent(token),
      }),
    );
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function manifest(provider: string, ref: string): string {
  return `
[tool]
name = "weather"
version = "1.0.0"
description = "Weather with a JIT key"
timeout_seconds = 10

[args.city]
type = "string"
required = true

[http]
method = "GET"
url = "http://127.0.0.1:${port}/w?city={city}"
headers = { "X-Api-Key" = "{_secret:api_key}" }

[output]
format = "json"
schema = { type = "object" }

[secrets.api_key]
jit = true
provider = "${provider}"
ref = "${ref}"
`;
}

async function setup(provider: string, ref: string) {
  const dir = mkdtempSync(join(tmpdir(), "warden-jit-"));
  writeFileSync(
    join(dir, "policy.yaml"),
    `
rules:
  - { id: w, name: w, priority: 100, match: { tool: weather }, decision: allow, reason: ok }
`,
  );
  const contracts = join(dir, "contracts");
  const text = manifest(provider, ref);
  mkdirSync(contracts);
  writeFileSync(join(contracts, "weather.clad.toml"), text);
  const rt = await composeRuntime({
    policy: [join(dir, "policy.yaml")],
    contracts: { dir: contracts },
    journal: { path: join(dir, "journal.db"), signer: generateKeyPair("ed25519") },
    gate: { principals: { "agent-a": { id: "agent-a", roles: ["agent"] } }, runs: "runtime" },
  });
  const parsed = parseContract(text);
  if (!parsed.ok) throw new Error(parsed.message);
  return { rt, dir, tool: parsed.tool };
}

async function callOnce(rt: Runtime, tool: CompiledTool, providers?: Record<string, SecretProvider>) {
  const run = await rt.startRun("agent-a");
  const o = await rt.gate.authorize({
    principalId: "agent-a",
    runId: run.runId,
    toolClass: "http",
    action: "get",
    tool: "weather",
    parameters: { city: "Oslo" },
  });
  const ticket = ticketOf(o);
  if (ticket === undefined) throw new Error(`not allowed: ${o.decision} ${o.reasonCodes.join()}`);
  const b = bindingForContract(tool, providers !== undefined ? { secretProviders: providers } : {});
  if (b.kind !== "http") throw new Error(b.kind);
  const ex = new HttpExecutor({ allowLoopback: true }, rt.executorDeps);
  const r = await ex.execute(ticket, b.binding);
  if (r.ok)
    await rt.gate.recordResult(o.decisionId!, {
      data: JSON.parse(r.output.body.toString("utf8")),
      taintLabels: [],
    });
  return { r, run };
}

/** Every journal file's bytes: the index (WAL included) and every segment file. */
function filesUnder(dir: string): string {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((f) => f.isFile() && relative(dir, join(f.parentPath, f.name)).startsWith("journal"))
    .map((f) => readFileSync(join(f.parentPath, f.name)).toString("latin1"))
    .join("\n");
}

const spellings = [SECRET, encodeURIComponent(SECRET), Buffer.from(SECRET).toString("base64").slice(0, 20)];

describe("just-in-time secrets", () => {
  it("a JIT secret fetched per call never reaches the journal file, the evidence, the context or the output", async () => {
    const asked: SecretRequest[] = [];
    const env = new EnvSecretProvider({ WEATHER_KEY: SECRET });
    const spy: SecretProvider = {
      get(r) {
        asked.push(r);
        return env.get(r);
      },
    };
    const { rt, dir, tool } = await setup("env", "WEATHER_KEY");
    const { r, run } = await callOnce(rt, tool, { env: spy });
    expect(received.at(-1)).toBe(SECRET); // it was sent
    expect(r.ok).toBe(true);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({
      name: "api_key",
      ref: "WEATHER_KEY",
      tool: "weather",
      runId: run.runId,
    });
    const evidence = JSON.stringify(r.evidence);
    const output = r.ok ? r.output.body.toString("utf8") + JSON.stringify(r.output.headers ?? {}) : "";
    const context = JSON.stringify([run.snapshot(), run.events()]);
    await rt.close();
    const journal = filesUnder(dir);
    for (const s of spellings) {
      expect(evidence).not.toContain(s);
      expect(output).not.toContain(s);
      expect(context).not.toContain(s);
      expect(journal).not.toContain(s);
    }
  });

  it("the file provider reads a mounted secret at call time", async () => {
    const dir = mkdtempSync(join(tmpdir(), "warden-jit-file-"));
    writeFileSync(join(dir, "key"), `${SECRET}\n`, { mode: 0o600 });
    const { rt, tool } = await setup("file", join(dir, "key"));
    const { r } = await callOnce(rt, tool);
    expect(received.at(-1)).toBe(SECRET);
    expect(r.ok).toBe(true);
    await rt.close();
  });

  it("a contract naming a provider the deployment lacks fails closed before anything is sent", async () => {
    const before = received.length;
    const { rt, tool } = await setup("vault", "kv/weather");
    const { r } = await callOnce(rt, tool);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toContain("ERR_TOOL_SECRET_MISSING");
    expect(received.length).toBe(before);
    await rt.close();
  });

  it("a relative or symlinked file reference is refused (the file provider reads only absolute regular files)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "warden-jit-link-"));
    writeFileSync(join(dir, "key"), SECRET, { mode: 0o600 });
    symlinkSync(join(dir, "key"), join(dir, "link"));
    for (const ref of ["relative/key", join(dir, "link")]) {
      const before = received.length;
      const { rt, tool } = await setup("file", ref);
      const { r } = await callOnce(rt, tool);
      expect(r.ok).toBe(false);
      expect(received.length).toBe(before);
      await rt.close();
    }
  });
});
