// The shell parser of the engine's shell checks (docs/hooks-shell.md): tree-sitter-bash, the
// grammar editors and GitHub use, run in WebAssembly by web-tree-sitter (chosen over sh-syntax
// by measurement: bench/shell-parser.ts). Its concrete syntax tree is turned (shell-tree.ts,
// shell-words.ts) into a small model of what runs: per script the simple commands, pipelines,
// groups and function definitions in order, each word after quote removal — `dynamic` when its
// value depends on an expansion the parser cannot know — with redirections and the scripts
// nested in $( … ), `…`, <( … ). It never throws: what the grammar cannot read (a syntax error,
// nesting deeper than MAX_DEPTH, a script over MAX_LENGTH, the parser not loaded) is
// `{ ok: false }`, which the preset denies.
//
// Loading the grammar is asynchronous (a WebAssembly module); parsing afterwards is
// synchronous. `loadShellParser()` loads it once per process, on first use: hook calls that
// never see a shell command never pay for it.
import { createRequire } from "node:module";
import { setFlagsFromString } from "node:v8";
import type { Language, Parser } from "web-tree-sitter";
import { MAX_LENGTH, type ParseResult, type ShellParseOptions, ShellSyntaxError } from "./shell-model.js";
import { toScript } from "./shell-tree.js";

export {
  type Item,
  MAX_DEPTH,
  MAX_LENGTH,
  type ParseResult,
  type Redirect,
  type Script,
  type ShellParseOptions,
  ShellSyntaxError,
  type SimpleCommand,
  type Word,
} from "./shell-model.js";

let parser: Parser | undefined;
let loading: Promise<void> | undefined;

async function load(): Promise<void> {
  // V8 would recompile the grammar's 1.3 MB module with its optimising tier in background
  // threads, and a short-lived hook process then waits about a second at exit for that to
  // finish; the baseline tier parses faster here anyway (bench/shell-parser.ts). Set before
  // the module is compiled; it applies to WebAssembly compiled afterwards in this process.
  setFlagsFromString("--liftoff-only");
  const { Parser: P, Language: L } = await import("web-tree-sitter");
  await P.init();
  const require = createRequire(import.meta.url);
  const lang: Language = await L.load(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"));
  const p = new P();
  p.setLanguage(lang);
  parser = p;
}

/** Loads the grammar once per process; later calls return at once. */
export function loadShellParser(): Promise<void> {
  loading ??= load().catch((err: unknown) => {
    loading = undefined;
    throw err;
  });
  return loading;
}

/** Whether `parseShell` can answer now (the grammar is loaded). */
export function shellParserReady(): boolean {
  return parser !== undefined;
}

/** Parses a command line with the loaded grammar; never throws. */
export function parseShell(src: string, opts: ShellParseOptions): ParseResult {
  if (src.length > MAX_LENGTH) return { ok: false, reason: `the command is over ${MAX_LENGTH} characters` };
  if (parser === undefined) return { ok: false, reason: "the shell parser is not loaded" };
  let tree: ReturnType<Parser["parse"]> = null;
  try {
    tree = parser.parse(src);
    if (tree === null) return { ok: false, reason: "the command could not be parsed" };
    return { ok: true, script: toScript(tree.rootNode, opts) };
  } catch (err) {
    if (err instanceof ShellSyntaxError) return { ok: false, reason: err.message };
    return { ok: false, reason: "the command could not be parsed" };
  } finally {
    tree?.delete();
  }
}

/** `parseShell` after loading the grammar. */
export async function parseShellAsync(src: string, opts: ShellParseOptions): Promise<ParseResult> {
  try {
    await loadShellParser();
  } catch {
    return { ok: false, reason: "the shell parser could not be loaded" };
  }
  return parseShell(src, opts);
}
