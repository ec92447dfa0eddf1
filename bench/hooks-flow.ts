// `npm run bench -- hooks-flow`: what flow control costs a one-shot hook call (issue 34;
// docs/hooks-sessions.md "Flow control"). One-shot host hooks (`warden hooks claude-code`:
// a process per event) are simulated in this process as hooks-journal.ts does — an engine
// opened on the same journal and state file for each event, the event answered, closed —
// and the process CPU per event measured. Same-run baselines: a Bash PreToolUse (loads no
// outputs) and an MCP send in a session that stored nothing. The session under test stored
// `PAGES` fetched pages of `PAGE_KIB` KiB (the store's text cap: 4 MiB). For comparison,
// what re-indexing every stored output on each call would cost (ProvenanceIndex.addOutput).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ProvenanceIndex, parseContextConfig } from "../src/context/index.js";
import { generateKeyPair } from "../src/crypto/index.js";
import { answerHostEvent, claudeCodeAdapter, createEngine } from "../src/hooks/index.js";
import { measure, measureAsync, type Stats, table } from "./_stats.js";

const N = Number(process.env.HOOKS_FLOW_N ?? 20);
const PAGES = Number(process.env.HOOKS_FLOW_PAGES ?? 64);
const PAGE_KIB = Number(process.env.HOOKS_FLOW_PAGE_KIB ?? 63);
const WORKSPACE = "/work/ws";
const FRIEND = "alice@corp.example";

function pageText(i: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let j = 0; size < PAGE_KIB * 1024; j++) {
    const line = `Section ${i}.${j}: the release ${i}-${j} changes the parser; see https://docs${i}.example.org/r/${j} or write to team${j}@corp${i}.example for details.`;
    lines.push(line);
    size += line.length + 1;
  }
  if (i === 0) lines.push(`Questions go to ${FRIEND}.`);
  return lines.join("\n");
}

const base = (session: string, event: string) => ({
  session_id: session,
  transcript_path: "/tmp/t.jsonl",
  cwd: WORKSPACE,
  permission_mode: "default",
  hook_event_name: event,
});
const prompt = (s: string) => ({
  ...base(s, "UserPromptSubmit"),
  prompt: `Summarise the docs and email ${FRIEND}`,
});
const fetched = (s: string, i: number) => ({
  ...base(s, "PostToolUse"),
  tool_name: "WebFetch",
  tool_input: { url: `https://docs${i}.example.org/`, prompt: "summarise" },
  tool_response: { result: pageText(i), code: 200, codeText: "OK", url: `https://docs${i}.example.org/` },
  tool_use_id: `toolu_${i}`,
});
const send = (s: string, to: string) => ({
  ...base(s, "PreToolUse"),
  tool_name: "mcp__mail__send_email",
  tool_input: { to, subject: "summary", body: "The summary." },
  tool_use_id: "toolu_send",
});
const bash = (s: string) => ({
  ...base(s, "PreToolUse"),
  tool_name: "Bash",
  tool_input: { command: "npm test", description: "tests" },
  tool_use_id: "toolu_bash",
});

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "warden-bench-hooks-flow-"));
  const signer = generateKeyPair("ed25519");
  const cfg = {
    journal: { path: join(dir, "journal.db"), signer },
    statePath: join(dir, "state.json"),
    workspace: WORKSPACE,
  };
  const oneShot = async (event: object) => {
    const engine = await createEngine(cfg);
    await answerHostEvent(engine, claudeCodeAdapter, event, new Date().toISOString());
    await engine.close();
  };
  try {
    await oneShot(prompt("empty"));
    await oneShot(prompt("full"));
    const seedCpu = process.cpuUsage();
    for (let i = 0; i < PAGES; i++) await oneShot(fetched("full", i));
    const seed = process.cpuUsage(seedCpu);
    const rows: Stats[] = [];
    const warm = 2;
    rows.push(
      await measureAsync(
        "PreToolUse Bash (baseline: loads no outputs)",
        N,
        () => oneShot(bash("full")),
        warm,
      ),
    );
    rows.push(
      await measureAsync(
        "PreToolUse MCP send, nothing stored (baseline)",
        N,
        () => oneShot(send("empty", "bob@corp.example")),
        warm,
      ),
    );
    rows.push(
      await measureAsync(
        `PreToolUse MCP send, ${PAGES} pages stored, none matches`,
        N,
        () => oneShot(send("full", "bob@partner.example")),
        warm,
      ),
    );
    rows.push(
      await measureAsync(
        `PreToolUse MCP send, ${PAGES} pages stored, one matches (fed)`,
        N,
        () => oneShot(send("full", FRIEND)),
        warm,
      ),
    );
    let fresh = 0;
    rows.push(
      await measureAsync(
        `PostToolUse WebFetch of a ${PAGE_KIB} KiB page (stored, new session)`,
        N,
        () => oneShot(fetched(`post-${fresh++}`, 1)),
        warm,
      ),
    );
    const opts = parseContextConfig({}).provenance;
    const texts = Array.from({ length: PAGES }, (_, i) => pageText(i));
    const label = [{ source: "web" as const, origin: "WebFetch:web" }];
    rows.push(
      measure(
        `(comparison) re-index all ${PAGES} pages into a ProvenanceIndex`,
        5,
        () => {
          const idx = new ProvenanceIndex(opts);
          texts.forEach((t, i) => {
            idx.addOutput(i + 1, t, label);
          });
        },
        1,
      ),
    );
    const kib = Math.round(texts.reduce((n, t) => n + t.length, 0) / 1024);
    process.stdout.write(
      `Flow control per one-shot hook event (one engine per event; ${PAGES} pages, ${kib} KiB stored; ` +
        `PostToolUse storing them: ${Math.round((seed.user + seed.system) / PAGES)} CPU µs per page)\n\n${table(rows, rows[0])}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
