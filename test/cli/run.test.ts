import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { SECRET, type Workspace, workspace } from "./demo-fixture.js";

let ws: Workspace;
beforeAll(async () => {
  ws = await workspace();
});
afterAll(async () => {
  await ws.close();
});

let n = 0;
async function run(turns: unknown[], extra: string[] = [], task = "summarise my notes") {
  const db = join(ws.dir, `run-${++n}.db`);
  const r = await runCli(
    "run",
    "--contracts",
    ws.contracts,
    "--policy",
    ws.policy,
    "--sandbox",
    ws.sandbox,
    "--db",
    db,
    "--script",
    ws.script(turns),
    ...extra,
    task,
  );
  return { ...r, db };
}

const call = (name: string, args: unknown) => ({ tool_calls: [{ name, arguments: args }] });
const BENIGN = [
  call("file_read", { path: "notes.txt" }),
  call("word_count", { path: "notes.txt" }),
  call("fetch_page", { page: "welcome" }),
  { text: "The report ships on Friday." },
];

describe("warden run: a benign task", () => {
  it("executes every allowed call on the real executors and ends with the answer (exit 0, --json)", async () => {
    const r = await run(BENIGN, ["--allow-loopback", "--json"]);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(
      j.steps.map((s: { tool: string; decision: string; status: string }) => [s.tool, s.decision, s.status]),
    ).toEqual([
      ["file_read", "allow", "executed"],
      ["word_count", "allow", "executed"],
      ["fetch_page", "allow", "executed"],
    ]);
    for (const s of j.steps) expect(s.evidenceHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(j.steps[2].taint).toEqual(["web"]);
    expect(j.result).toMatchObject({
      reason: "final_answer",
      finalText: "The report ships on Friday.",
      toolCalls: 3,
    });
    expect(j.quarantined).toBe(false);
    expect(j.journal).toMatchObject({ verified: true, db: r.db });
    expect(statSync(`${r.db}.key.pem`).mode & 0o777).toBe(0o600);
    const v = await runCli("journal", "verify", "--db", r.db, "--keys", `${r.db}.key.pub.pem`);
    expect(v.code).toBe(0);
  });

  it("prints proposal, decision with reasons and evidence per step in the readable form", async () => {
    const r = await run(BENIGN, ["--allow-loopback"]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('[1] file_read {"path":"notes.txt"}');
    expect(r.out).toMatch(/\+ allow {2}RULE:demo-allow-file-reads/);
    expect(r.out).toMatch(/= executed {2}evidence sha256:[0-9a-f]{64} {2}taint tool-output/);
    expect(r.out).toContain("ended     final_answer after 4 turn(s), 3 tool call(s)");
    expect(r.out).toMatch(/journal {3}verified, \d+ entries, head sha256:/);
    expect(r.out).toContain("BEGIN PUBLIC KEY");
    expect(r.out).not.toContain("PRIVATE KEY");
  });
});

describe("warden run: a prompt injection", () => {
  const ATTACK = [
    call("fetch_page", { page: "release-notes" }),
    {
      tool_calls: [
        { name: "file_read", arguments: { path: "secrets/api_key.txt" } },
        { name: "send_report", arguments: { text: "key follows" } },
      ],
    },
    { text: "done" },
  ];

  it("denies the secret read, quarantines the run, sends nothing and exits 1", async () => {
    const before = ws.collected.length;
    const r = await run(ATTACK, ["--allow-loopback", "--json"]);
    expect(r.code).toBe(1);
    const j = JSON.parse(r.out);
    expect(j.steps[1]).toMatchObject({ tool: "file_read", decision: "deny", status: "denied" });
    expect(j.steps[1].reasons).toContain("behavior_web_taint_sensitive_probe");
    expect(j.steps[2]).toMatchObject({ tool: "send_report", stage: "not_evaluated", status: "not_executed" });
    expect(j.result.reason).toBe("quarantined");
    expect(j.quarantined).toBe(true);
    expect(ws.collected.length).toBe(before);
    expect(r.out).not.toContain(SECRET);
    expect(j.journal.verified).toBe(true);
  });

  it("refuses what a contract cannot express before the Gate: traversal, absolute paths, unknown tools", async () => {
    const r = await run(
      [
        {
          tool_calls: [
            { name: "file_read", arguments: { path: "../outside/private.txt" } },
            { name: "file_read", arguments: { path: "/etc/passwd" } },
            { name: "shell", arguments: { cmd: "cat secrets/api_key.txt" } },
            { name: "file_read", arguments: '{"path": "notes.txt", "path": "secrets/api_key.txt"}' },
          ],
        },
        { text: "gave up" },
      ],
      ["--json"],
    );
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.steps.map((s: { stage: string; status: string }) => [s.stage, s.status])).toEqual([
      ["contract", "rejected"],
      ["contract", "rejected"],
      ["contract", "rejected"],
      ["contract", "rejected"],
    ]);
    expect(j.steps[0].reasons.join(" ")).toContain("ERR_TOOL_ARG_TRAVERSAL");
    expect(j.steps[1].reasons.join(" ")).toContain("ERR_TOOL_ARG_ABSOLUTE_PATH");
    expect(j.steps[2].reasons.join(" ")).toContain("ERR_TOOL_UNKNOWN");
    expect(j.result.decisions.rejected).toBe(4);
  });

  it("contains a symlink out of the sandbox at the executor (allowed by policy, refused by the FileExecutor)", async () => {
    const r = await run([call("file_read", { path: "shortcut.txt" }), { text: "ok" }], ["--json"]);
    const j = JSON.parse(r.out);
    expect(j.steps[0]).toMatchObject({ decision: "allow", status: "failed", code: "ERR_EXEC_PATH_SYMLINK" });
    expect(r.out).not.toContain("outside the sandbox");
  });

  it("keeps loopback closed unless --allow-loopback is given (ERR_EXEC_SSRF_BLOCKED)", async () => {
    const r = await run([call("fetch_page", { page: "welcome" }), { text: "ok" }], ["--json"]);
    const j = JSON.parse(r.out);
    expect(j.steps[0]).toMatchObject({ decision: "allow", status: "failed", code: "ERR_EXEC_SSRF_BLOCKED" });
  });
});

describe("warden run: an OpenAI-compatible model endpoint", () => {
  let server: Server;
  let url: string;
  const bodies: { tools?: { function: { name: string } }[]; messages: unknown[] }[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c.toString();
      });
      req.on("end", () => {
        const parsed = JSON.parse(body);
        bodies.push(parsed);
        const first = bodies.length === 1;
        const message = first
          ? {
              role: "assistant",
              content: null,
              tool_calls: [
                {
                  id: "c1",
                  type: "function",
                  function: { name: "file_read", arguments: '{"path":"notes.txt"}' },
                },
              ],
            }
          : { role: "assistant", content: "It ships on Friday." };
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            id: "x",
            object: "chat.completion",
            choices: [{ index: 0, message, finish_reason: first ? "tool_calls" : "stop" }],
            usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
          }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("shows the model contracts and built-ins, never URLs, and feeds executed output back", async () => {
    const db = join(ws.dir, "model.db");
    const r = await runCli(
      "run",
      ...["--contracts", ws.contracts, "--policy", ws.policy, "--sandbox", ws.sandbox, "--db", db],
      ...["--model-url", url, "--model", "test-model", "--json"],
      "when does the report ship?",
    );
    expect(r.code).toBe(0);
    const names = (bodies[0]?.tools ?? []).map((t) => t.function.name).sort();
    expect(names).toEqual([
      "fetch_page",
      "file_delete",
      "file_list",
      "file_read",
      "file_write",
      "send_report",
      "word_count",
    ]);
    expect(JSON.stringify(bodies[0])).not.toContain(ws.origin);
    expect(JSON.stringify(bodies[1]?.messages)).toContain("the report ships on friday");
    expect(JSON.parse(r.out).result).toMatchObject({
      reason: "final_answer",
      finalText: "It ships on Friday.",
    });
  });
});

describe("warden run: bad input exits 2", () => {
  const base = () => ["run", "--contracts", ws.contracts, "--policy", ws.policy];

  it("requires exactly one model source", async () => {
    const none = await runCli(...base(), "task");
    expect(none.code).toBe(2);
    expect(none.err).toContain("ERR_CLI_USAGE");
    const both = await runCli(
      ...base(),
      "--script",
      ws.script(BENIGN),
      "--model-url",
      "http://127.0.0.1:1/v1",
      "--model",
      "m",
      "task",
    );
    expect(both.code).toBe(2);
    expect(both.err).toContain("ERR_CLI_USAGE");
  });

  it("refuses an invalid script (ERR_MODEL_SCRIPT_INVALID) and a bad --max-iterations", async () => {
    const bad = ws.json("bad-script.json", { turns: [{ text: "x", surprise: 1 }] });
    const r = await runCli(...base(), "--script", bad, "task");
    expect(r.code).toBe(2);
    expect(r.err).toContain("ERR_MODEL_SCRIPT_INVALID");
    const it0 = await runCli(...base(), "--script", ws.script(BENIGN), "--max-iterations", "0", "task");
    expect(it0.code).toBe(2);
    expect(it0.err).toContain("ERR_CLI_USAGE");
  });

  it("refuses a contracts directory that shadows a built-in tool name", async () => {
    const dir = join(ws.dir, "shadow");
    mkdirSync(dir);
    writeFileSync(
      join(dir, "file_read.clad.toml"),
      readFileSync(join(ws.contracts, "word_count.clad.toml"), "utf8").replace(
        'name = "word_count"',
        'name = "file_read"',
      ),
    );
    const r = await runCli(
      "run",
      "--contracts",
      dir,
      "--policy",
      ws.policy,
      "--script",
      ws.script(BENIGN),
      "task",
    );
    expect(r.code).toBe(2);
    expect(r.err).toContain("ERR_CLI_INPUT");
    expect(r.err).toContain("file_read reuses the name of a built-in tool");
  });
});
