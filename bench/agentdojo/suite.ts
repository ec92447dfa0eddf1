// Reads one AgentDojo export folder (the format of ../shared/agentdojo/README.md) in place:
// suite.json, tools.json, user_tasks.json, injection_tasks.json, outputs.json. Nothing is
// copied; a missing or malformed file fails with what to do about it.
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

export interface Call {
  function: string;
  args: Record<string, unknown>;
}

export interface OutputRef {
  text: number | null;
  error: string | null;
}

export interface ToolDef {
  name: string;
  description: string | null;
  parameters: Record<string, unknown>;
  category: string | null;
  observed_state_change: boolean | null;
  /** MCP tool annotations, when the export carries them (AgentDojo's do not). */
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; openWorldHint?: boolean } | null;
}

export interface UserTask {
  id: string;
  prompt: string;
  ground_truth_calls: Call[];
  injection_candidates: string[];
  first_injected_call_index: number | null;
  ground_truth_outputs: OutputRef[];
  injected_outputs_template: (OutputRef | null)[] | null;
}

export interface InjectionTask {
  id: string;
  goal: string;
  ground_truth_calls: Call[];
  attack_text: string;
  attack_text_in_outputs: Record<string, string>;
  ground_truth_outputs: OutputRef[];
}

export interface Suite {
  name: string;
  dir: string;
  tools: ToolDef[];
  userTasks: UserTask[];
  injectionTasks: InjectionTask[];
  texts: string[];
  marker: RegExp;
  now: string;
}

export class SuiteError extends Error {}

const HOW =
  "point the harness at an AgentDojo export folder with --suite-dir DIR (repeatable); the default is ../shared/agentdojo/export/*";

function readJson(dir: string, file: string): unknown {
  const path = join(dir, file);
  if (!existsSync(path)) throw new SuiteError(`${path} is missing: ${HOW}`);
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new SuiteError(`${path} is not JSON (${(err as Error).message})`);
  }
}

function list<T>(v: unknown, what: string): T[] {
  if (!Array.isArray(v)) throw new SuiteError(`${what} is not a list`);
  return v as T[];
}

function record(v: unknown, what: string): Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new SuiteError(`${what} is not an object`);
  return v as Record<string, unknown>;
}

const DEFAULT_MARKER = "⟦INJECTION:([^:⟧]*):([^⟧]+)⟧";

/** Loads one suite folder. Throws SuiteError naming the file and the fix. */
export function loadSuite(dir: string): Suite {
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new SuiteError(`no suite folder at ${dir}: ${HOW}`);
  const meta = record(readJson(dir, "suite.json"), "suite.json");
  const name = meta.suite;
  if (typeof name !== "string" || name.length === 0)
    throw new SuiteError(`${dir}/suite.json has no 'suite' name`);
  const placeholders = (meta.output_placeholders ?? {}) as Record<string, unknown>;
  const regex =
    typeof placeholders.injection_marker_regex === "string"
      ? placeholders.injection_marker_regex
      : DEFAULT_MARKER;
  const now = typeof placeholders.now === "string" ? placeholders.now : "⟦NOW⟧";
  const tools = list<ToolDef>(readJson(dir, "tools.json"), "tools.json");
  for (const t of tools) {
    if (typeof t.name !== "string" || typeof t.parameters !== "object" || t.parameters === null)
      throw new SuiteError(`${dir}/tools.json: every tool needs a name and a parameters schema`);
  }
  const outputs = record(readJson(dir, "outputs.json"), "outputs.json");
  const texts = list<string>(outputs.texts, "outputs.json texts");
  const userTasks = list<UserTask>(readJson(dir, "user_tasks.json"), "user_tasks.json");
  const injectionTasks = list<InjectionTask>(readJson(dir, "injection_tasks.json"), "injection_tasks.json");
  for (const u of userTasks) {
    if (!Array.isArray(u.ground_truth_calls) || !Array.isArray(u.ground_truth_outputs))
      throw new SuiteError(
        `${dir}/user_tasks.json: ${String(u.id)} lacks ground_truth_calls or ground_truth_outputs`,
      );
  }
  for (const i of injectionTasks) {
    if (!Array.isArray(i.ground_truth_calls) || typeof i.attack_text !== "string")
      throw new SuiteError(
        `${dir}/injection_tasks.json: ${String(i.id)} lacks ground_truth_calls or attack_text`,
      );
  }
  return { name, dir, tools, userTasks, injectionTasks, texts, marker: new RegExp(regex, "g"), now };
}

/** The text of one recorded output (markers filled from `forms`; `⟦NOW⟧` set to `now`). A marker without a text, or a missing text, is a SuiteError. */
export function fillOutput(
  suite: Suite,
  ref: OutputRef,
  forms: Record<string, string> | null,
  now: string,
): OutputRef & { value: string } {
  const fill = (s: string): string =>
    s
      .replace(suite.marker, (m, _v: string, form: string) => {
        const t = forms?.[form];
        if (t === undefined) throw new SuiteError(`${suite.dir}: no text for the injection marker ${m}`);
        return t;
      })
      .split(suite.now)
      .join(now);
  const text = ref.text === null ? "" : suite.texts[ref.text];
  if (text === undefined) throw new SuiteError(`${suite.dir}/outputs.json: no text ${ref.text}`);
  return { text: ref.text, error: ref.error === null ? null : fill(ref.error), value: fill(text) };
}
