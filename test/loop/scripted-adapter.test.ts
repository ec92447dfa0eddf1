import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ModelError } from "../../src/contracts/index.js";
import { loadScriptFile, type ModelRequest, parseScript, ScriptedAdapter } from "../../src/loop/index.js";

const dir = mkdtempSync(join(tmpdir(), "warden-script-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

const req: ModelRequest = { messages: [{ role: "user", content: "0123456789abcdef" }], tools: [] };

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ModelError);
    return (err as ModelError).code;
  }
  throw new Error("did not throw");
}

describe("ScriptedAdapter", () => {
  it("plays the turns of a JSON script in order, then refuses with ERR_MODEL_SCRIPT_EXHAUSTED", async () => {
    const p = file(
      "s.json",
      JSON.stringify({
        turns: [
          {
            tool_calls: [{ name: "read_file", arguments: { path: "a" } }],
            usage: { input_tokens: 3, output_tokens: 2 },
          },
          { text: "done" },
        ],
      }),
    );
    const m = ScriptedAdapter.fromFile(p);
    expect(m.id).toBe(`scripted:${p}`);
    const t1 = await m.complete(req);
    expect(t1.toolCalls).toEqual([
      { id: "call_1_1", name: "read_file", arguments: { ok: true, value: { path: "a" } } },
    ]);
    expect(t1.usage).toEqual({ inputTokens: 3, outputTokens: 2 });
    const t2 = await m.complete(req);
    expect(t2.text).toBe("done");
    expect(t2.toolCalls).toEqual([]);
    // Estimated usage: 16 input characters → 4 tokens, "done" → 1 token.
    expect(t2.usage).toEqual({ inputTokens: 4, outputTokens: 1 });
    expect(m.remaining).toBe(0);
    const err = await m.complete(req).then(
      () => null,
      (e: unknown) => e as ModelError,
    );
    expect(err?.code).toBe("ERR_MODEL_SCRIPT_EXHAUSTED");
  });

  it("reads YAML scripts, including a bare list of turns", async () => {
    const p = file(
      "s.yaml",
      "- text: hello\n- tool_calls:\n    - name: fetch_page\n      arguments: {url: 'http://x'}\n",
    );
    const m = ScriptedAdapter.fromFile(p);
    expect((await m.complete(req)).text).toBe("hello");
    expect((await m.complete(req)).toolCalls[0]?.name).toBe("fetch_page");
  });

  it("raw-string arguments are parsed strictly, so a script can play a model that writes broken JSON", async () => {
    const m = new ScriptedAdapter([
      { tool_calls: [{ name: "read_file", arguments: '{"path": "a"' }] },
      { tool_calls: [{ name: "read_file", arguments: '{"path":"a","path":"b"}' }] },
    ]);
    expect((await m.complete(req)).toolCalls[0]?.arguments.ok).toBe(false);
    expect((await m.complete(req)).toolCalls[0]?.arguments.ok).toBe(false);
  });

  it("hands out copies: a caller mutating arguments does not change the next replay", async () => {
    const script = { turns: [{ tool_calls: [{ name: "t", arguments: { a: 1 } }] }] };
    const a = new ScriptedAdapter(script);
    const b = new ScriptedAdapter(script);
    const first = (await a.complete(req)).toolCalls[0]?.arguments;
    if (first?.ok) first.value.a = 2;
    expect((await b.complete(req)).toolCalls[0]?.arguments).toEqual({ ok: true, value: { a: 1 } });
  });

  it("an aborted signal → ERR_MODEL_ABORTED and the turn is not consumed", async () => {
    const m = new ScriptedAdapter([{ text: "x" }]);
    const ac = new AbortController();
    ac.abort();
    const err = await m.complete(req, { signal: ac.signal }).then(
      () => null,
      (e: unknown) => e as ModelError,
    );
    expect(err?.code).toBe("ERR_MODEL_ABORTED");
    expect(m.remaining).toBe(1);
  });

  const invalid: [string, unknown][] = [
    [
      "an unknown key in a turn (a typo must not turn a tool call into an answer)",
      { turns: [{ tool_call: [] }] },
    ],
    ["a turn with neither text nor tool calls", { turns: [{}] }],
    ["an empty script", { turns: [] }],
    ["a tool call without a name", { turns: [{ tool_calls: [{ arguments: {} }] }] }],
    ["negative usage", { turns: [{ text: "x", usage: { input_tokens: -1, output_tokens: 0 } }] }],
    ["a non-object", "hello"],
  ];
  for (const [name, value] of invalid) {
    it(`rejects ${name} with ERR_MODEL_SCRIPT_INVALID`, () => {
      expect(codeOf(() => parseScript(value))).toBe("ERR_MODEL_SCRIPT_INVALID");
    });
  }

  it("rejects JSON with duplicate keys, YAML with duplicate keys, unreadable and oversized files", () => {
    expect(
      codeOf(() => loadScriptFile(file("d.json", '{"turns":[{"text":"a"}],"turns":[{"text":"b"}]}'))),
    ).toBe("ERR_MODEL_SCRIPT_INVALID");
    expect(codeOf(() => loadScriptFile(file("d.yaml", "turns:\n  - text: a\nturns:\n  - text: b\n")))).toBe(
      "ERR_MODEL_SCRIPT_INVALID",
    );
    expect(codeOf(() => loadScriptFile(join(dir, "missing.json")))).toBe("ERR_MODEL_SCRIPT_INVALID");
    expect(codeOf(() => loadScriptFile(file("big.json", " ".repeat(4 * 1024 * 1024 + 1))))).toBe(
      "ERR_MODEL_SCRIPT_INVALID",
    );
  });

  it("rejects a YAML alias bomb (the anchors sit where the schema would accept them)", () => {
    const lines = [
      "turns:",
      "  - tool_calls:",
      "      - name: t",
      "        arguments:",
      "          a: &a [x, x, x, x, x, x, x, x, x, x]",
    ];
    for (let i = 0; i < 12; i++) {
      const prev = String.fromCharCode(97 + i);
      const next = String.fromCharCode(98 + i);
      lines.push(`          ${next}: &${next} [${Array(10).fill(`*${prev}`).join(", ")}]`);
    }
    const bomb = file("bomb.yaml", lines.join("\n"));
    expect(codeOf(() => loadScriptFile(bomb))).toBe("ERR_MODEL_SCRIPT_INVALID");
    // The same shape with two levels of aliases is a valid script: the refusal is the alias limit.
    const small = file("small.yaml", lines.slice(0, 6).join("\n"));
    expect(loadScriptFile(small).turns).toHaveLength(1);
  });
});
