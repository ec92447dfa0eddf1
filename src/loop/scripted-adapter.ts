// A model that replays a list of turns from a file: reproducible runs, the demo, tests.
// The script is parsed strictly at load time (unknown keys are errors, so a typo never
// silently turns a tool call into a final answer). Arguments may be given as an object
// or as raw JSON text, so a script can also play a model that writes broken JSON.
import { readFileSync } from "node:fs";
import { extname } from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { ModelError, parseStrictJson } from "../contracts/index.js";
import {
  type ModelAdapter,
  type ModelCallOptions,
  type ModelRequest,
  type ModelResponse,
  parseToolArguments,
} from "./model.js";

const MAX_SCRIPT_BYTES = 4 * 1024 * 1024;

const ScriptToolCall = z.strictObject({
  id: z.string().min(1).max(128).optional(),
  name: z.string().min(1).max(256),
  arguments: z.union([z.record(z.string(), z.json()), z.string().max(1_048_576)]).default({}),
});

const ScriptTurn = z
  .strictObject({
    text: z.string().max(1_000_000).nullable().optional(),
    tool_calls: z.array(ScriptToolCall).max(256).optional(),
    usage: z
      .strictObject({
        input_tokens: z.number().int().min(0),
        output_tokens: z.number().int().min(0),
      })
      .optional(),
  })
  .refine((t) => (t.text ?? null) !== null || (t.tool_calls?.length ?? 0) > 0, {
    message: "a turn needs text or at least one tool call",
  });

export const ScriptSchema = z.strictObject({
  turns: z.array(ScriptTurn).min(1).max(10_000),
});
export type ScriptTurn = z.infer<typeof ScriptTurn>;
export type Script = z.infer<typeof ScriptSchema>;

/** Validates a parsed script (object with `turns`, or a bare list of turns). */
export function parseScript(value: unknown): Script {
  const res = ScriptSchema.safeParse(Array.isArray(value) ? { turns: value } : value);
  if (!res.success) {
    const first = res.error.issues[0];
    const path = first?.path.map(String).join(".") || "(root)";
    throw new ModelError(
      "ERR_MODEL_SCRIPT_INVALID",
      `script invalid at ${path}: ${first?.message ?? "invalid"}`,
    );
  }
  return res.data;
}

/** Reads a script file: `.yaml`/`.yml` as YAML, anything else as strict JSON. */
export function loadScriptFile(path: string): Script {
  let text: string;
  try {
    const buf = readFileSync(path);
    if (buf.length > MAX_SCRIPT_BYTES) {
      throw new ModelError("ERR_MODEL_SCRIPT_INVALID", `script larger than ${MAX_SCRIPT_BYTES} bytes`);
    }
    text = buf.toString("utf8");
  } catch (err) {
    if (err instanceof ModelError) throw err;
    throw new ModelError(
      "ERR_MODEL_SCRIPT_INVALID",
      `cannot read script: ${(err as NodeJS.ErrnoException).code ?? "error"}`,
    );
  }
  let value: unknown;
  try {
    const ext = extname(path).toLowerCase();
    value =
      ext === ".yaml" || ext === ".yml"
        ? parseYaml(text, { uniqueKeys: true, maxAliasCount: 100 })
        : parseStrictJson(text, { maxLength: MAX_SCRIPT_BYTES });
  } catch (err) {
    throw new ModelError("ERR_MODEL_SCRIPT_INVALID", "script is not valid JSON/YAML", { cause: err });
  }
  return parseScript(value);
}

/** Rough, deterministic token estimate (4 characters a token) for scripts that state no usage. */
function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

export interface ScriptedAdapterOptions {
  /** Shown in the journal (default `scripted`). */
  id?: string;
}

export class ScriptedAdapter implements ModelAdapter {
  readonly id: string;
  readonly #turns: readonly ScriptTurn[];
  #next = 0;

  constructor(script: Script | readonly ScriptTurn[], options: ScriptedAdapterOptions = {}) {
    this.#turns = parseScript(Array.isArray(script) ? { turns: script } : script).turns;
    this.id = options.id ?? "scripted";
  }

  static fromFile(path: string, options: ScriptedAdapterOptions = {}): ScriptedAdapter {
    return new ScriptedAdapter(loadScriptFile(path), { id: options.id ?? `scripted:${path}` });
  }

  /** Turns not yet played. */
  get remaining(): number {
    return this.#turns.length - this.#next;
  }

  async complete(request: ModelRequest, options: ModelCallOptions = {}): Promise<ModelResponse> {
    if (options.signal?.aborted) throw new ModelError("ERR_MODEL_ABORTED", "model call aborted");
    const turn = this.#turns[this.#next];
    if (turn === undefined) {
      throw new ModelError("ERR_MODEL_SCRIPT_EXHAUSTED", `script has no turn ${this.#next + 1}`);
    }
    this.#next += 1;
    const n = this.#next;
    const toolCalls = (turn.tool_calls ?? []).map((c, i) => ({
      id: c.id ?? `call_${n}_${i + 1}`,
      name: c.name,
      arguments:
        typeof c.arguments === "string"
          ? parseToolArguments(c.arguments)
          : { ok: true as const, value: structuredClone(c.arguments) as Record<string, unknown> },
    }));
    const inputChars = request.messages.reduce((s, m) => s + (m.content?.length ?? 0), 0);
    const outputChars =
      (turn.text?.length ?? 0) +
      (turn.tool_calls ?? []).reduce(
        (s, c) =>
          s +
          c.name.length +
          (typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments)).length,
        0,
      );
    return {
      text: turn.text ?? null,
      toolCalls,
      usage: turn.usage
        ? { inputTokens: turn.usage.input_tokens, outputTokens: turn.usage.output_tokens }
        : { inputTokens: estimateTokens(inputChars), outputTokens: estimateTokens(outputChars) },
      finishReason: toolCalls.length > 0 ? "tool_calls" : "stop",
    };
  }
}
