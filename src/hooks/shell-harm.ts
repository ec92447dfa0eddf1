// What a parsed command line plainly does that no sandbox should be asked to contain
// (docs/hooks-shell.md): remote or decoded code run by an interpreter, reverse shells,
// destruction, persistence, installs from outside the registries, credential reads and their
// exfiltration, Warden itself as a command — through any spelling the parser sees (quotes,
// paths, wrappers, nested shells, functions, pipelines and tee chains, files written earlier
// in the same line). What it cannot see is reported as `dynamic` and runs contained.
import { resolve } from "node:path";
import { isWithin } from "./coding-profile.js";
import { type Item, parseShell, type Script, type SimpleCommand, type Word } from "./shell.js";
import { unwrap } from "./shell-commands.js";
import { destroys, wipesMachine } from "./shell-destroy.js";
import {
  callsInterpreter,
  literalOutput,
  looksUpOutput,
  REVERSE_CODE,
  selfCalls,
} from "./shell-harm-parts.js";
import {
  type Flow,
  type HarmContext,
  HarmState,
  MAX_DEPTH,
  type ShellFindings,
  union,
} from "./shell-harm-state.js";
import {
  inlineCode,
  isDecoder,
  isFetcher,
  isInterpreter,
  isNetworkTool,
  isPackageManager,
  isShell,
  isSocketTool,
  offRegistryInstall,
  persists,
  programName,
  readsCodeFromStdin,
  reverseShellArgs,
  runsWarden,
  scriptOperand,
} from "./shell-programs.js";
import { commandWrites } from "./shell-writers.js";
import { nextCwd } from "./shell-writes.js";

export { FINDINGS, type Finding, type HarmContext, type ShellFindings } from "./shell-harm-state.js";

class Harm extends HarmState {
  script(
    s: Script,
    cwd: string | undefined,
    input: Flow,
    depth: number,
  ): { cwd: string | undefined; out: Flow } {
    if (depth > MAX_DEPTH) return { cwd, out: new Set() };
    let out: Flow = new Set();
    for (const item of s.items) {
      const r = this.item(item, cwd, input, depth);
      cwd = r.cwd;
      out = union(out, r.out);
    }
    return { cwd, out };
  }

  item(
    item: Item,
    cwd: string | undefined,
    input: Flow,
    depth: number,
  ): { cwd: string | undefined; out: Flow } {
    switch (item.kind) {
      case "command":
        return this.command(item.command, cwd, input, depth);
      case "group": {
        for (const n of item.nested) this.script(n, cwd, new Set(), depth + 1);
        const r = this.script(item.script, cwd, input, depth + 1);
        this.redirects(item.redirects, cwd, r.out);
        return { cwd: item.subshell ? cwd : r.cwd, out: r.out };
      }
      case "pipeline":
        return { cwd, out: this.pipeline(item.stages, cwd, input, depth) };
      case "function":
        this.functions.set(item.name, item.body);
        if (selfCalls(item.body, item.name) >= 2) this.note("wipesMachine", `fork bomb ${item.name}()`);
        this.script(item.body, cwd, new Set(), depth + 1);
        return { cwd, out: new Set() };
    }
  }

  /** Each stage reads what every stage before it wrote (tee passes it on): flows accumulate. */
  pipeline(stages: Script[], cwd: string | undefined, input: Flow, depth: number): Flow {
    let flow = input;
    for (const stage of stages) flow = union(flow, this.script(stage, cwd, flow, depth + 1).out);
    return flow;
  }

  command(
    cmd: SimpleCommand,
    cwd: string | undefined,
    input: Flow,
    depth: number,
  ): { cwd: string | undefined; out: Flow } {
    let subs: Flow = new Set();
    const readers = cmd.nested.filter((n) => n.readsOutput === true);
    for (const n of cmd.nested)
      if (n.readsOutput !== true) subs = union(subs, this.script(n, cwd, new Set(), depth + 1).out);
    const u = unwrap(cmd.words, this.ctx.profile.home);
    for (const s of u.scripts) {
      if (s.ok) this.script(s.script, cwd, input, depth + 1);
      else this.note("dynamic", `${s.via}: ${s.reason}`);
      if (subs.has("fetch")) this.note("remoteCode", `${s.via} runs downloaded code`);
      if (subs.has("decode")) this.note("decodedCode", `${s.via} runs decoded code`);
    }
    let out: Flow = new Set();
    // `sh < t`: a file written earlier in the line is the command's input.
    for (const r of cmd.redirects) {
      const abs = r.op === "<" ? this.abs(r.target, cwd) : undefined;
      const written = abs === undefined ? undefined : this.files.get(abs);
      if (written !== undefined) input = union(input, written);
    }
    for (const inner of u.commands) {
      const r = this.simple(inner, cmd, cwd, input, subs, depth);
      cwd = r.cwd;
      out = union(out, r.out);
    }
    if (u.commands.length === 0 && u.scripts.length === 0 && cmd.words.length === 0) out = subs;
    // >( … ) reads what the command writes (tee >(sh), curl … > >(bash)).
    for (const n of readers) this.script(n, cwd, union(input, out), depth + 1);
    this.redirects(cmd.redirects, cwd, out);
    return { cwd, out };
  }

  simple(
    words: Word[],
    cmd: SimpleCommand,
    cwd: string | undefined,
    input: Flow,
    subs: Flow,
    depth: number,
  ): { cwd: string | undefined; out: Flow } {
    const name = programName(words);
    const out: Flow = new Set();
    if (name === "") {
      // A program named by an expansion runs whatever the expansion gives: $(curl …) runs
      // the download as a command line; `$SHELL` fed a download runs it.
      this.note("dynamic", "a command named by an expansion");
      if (subs.has("fetch") || input.has("fetch"))
        this.note("remoteCode", "a command line built from a download");
      if (subs.has("decode") || input.has("decode"))
        this.note("decodedCode", "a command line built from decoded data");
      return { cwd, out };
    }
    if (name === "cd" || name === "pushd") return { cwd: nextCwd(words, cwd, this.ctx.profile.home), out };
    if (name === "alias") this.alias(words, cwd, depth);
    if (runsWarden(name, words)) this.note("wardenCommand", words.map((w) => w.text).join(" "));
    this.network(name, words, cmd, cwd, { input, subs, out });
    if (isDecoder(name, words)) out.add("decode");
    const d = destroys(name, words, cwd, this.ctx);
    if (d) this.note("destructive", d);
    const m = wipesMachine(name, words);
    if (m) this.note("wipesMachine", m);
    if (persists(name, words)) this.note("persistence", words.map((w) => w.text).join(" "));
    this.install(name, words, cwd, input);
    this.code(name, words, cmd, cwd, { input, subs, out }, depth);
    for (const ref of commandWrites(words, this.ctx.profile.home)) {
      const abs = this.abs(ref.word, cwd);
      const flow = ref.via === "curl" || ref.via === "wget" ? new Set(["fetch"] as const) : input;
      if (abs !== undefined) this.files.set(abs, union(this.files.get(abs) ?? new Set(), flow));
    }
    if (name === "tee" || name === "cat" || name === "head" || name === "tail")
      for (const f of input) out.add(f);
    // Reading a file written earlier in the line (cat t, grep x t) passes on what it holds.
    for (const w of words.slice(1)) {
      const abs = this.abs(w, cwd);
      for (const f of abs === undefined ? [] : (this.files.get(abs) ?? [])) out.add(f);
    }
    const lit = literalOutput(name, words, cmd);
    if (lit !== undefined) out.add(`lit:${lit}`);
    return { cwd, out };
  }

  /** Network tools: credentials sent, remote content read, sockets wired to shells or pipes. */
  network(
    name: string,
    words: readonly Word[],
    cmd: SimpleCommand,
    cwd: string | undefined,
    flows: { input: Flow; subs: Flow; out: Flow },
  ): void {
    const { input, subs, out } = flows;
    const creds = this.credentials(words, cwd);
    if (creds) out.add("credential");
    const net = isNetworkTool(name);
    if (net && (creds || input.has("credential") || subs.has("credential")))
      this.note("exfiltration", `${name} sends a credential`);
    if (looksUpOutput(name, words, subs.size + cmd.nested.length > 0))
      this.note("exfiltration", `${name} looks up a name built from a command's output`);
    if (isFetcher(name)) out.add("fetch");
    if (net) out.add("network");
    if (net && input.has("shell")) this.note("reverseShell", `a shell piped into ${name}`);
    if (isSocketTool(name)) this.sockets++;
    if (name === "mkfifo" || (name === "mknod" && words.some((w) => w.text === "p"))) this.fifos++;
    if (this.sockets > 0 && this.fifos > 0)
      this.note("reverseShell", "a named pipe wired to a network socket");
    if (reverseShellArgs(name, words)) this.note("reverseShell", words.map((w) => w.text).join(" "));
  }

  /** alias x='…': dynamic (what runs depends on later words), and the value is scanned. */
  alias(words: readonly Word[], cwd: string | undefined, depth: number): void {
    for (const w of words.slice(1)) {
      const eq = w.text.indexOf("=");
      if (eq <= 0) continue;
      this.note("dynamic", `alias ${w.text.slice(0, eq)}`);
      const p = parseShell(w.text.slice(eq + 1), { home: this.ctx.profile.home });
      if (p.ok) this.script(p.script, cwd, new Set(), depth + 1);
    }
  }

  install(name: string, words: readonly Word[], cwd: string | undefined, input: Flow): void {
    const ws = this.ctx.profile.workspace;
    const outside = (p: string) => {
      const abs = p.startsWith("~")
        ? resolve(this.ctx.profile.home, p.slice(2))
        : this.abs({ text: p, dynamic: false }, cwd);
      return abs === undefined || ws === undefined || !isWithin(abs, ws);
    };
    // python3 -m pip install … is pip install …
    const pip =
      /^(python[0-9.]*|pypy[0-9.]*)$/.test(name) && words[1]?.text === "-m" && words[2]?.text === "pip";
    const spec = pip
      ? offRegistryInstall("pip", words.slice(2), outside)
      : offRegistryInstall(name, words, outside);
    if (spec !== undefined) this.note("urlInstall", `${name} ${spec}`);
    if (isPackageManager(name) && input.has("fetch"))
      this.note("urlInstall", `a download piped into ${name}`);
  }

  /** Interpreters: code from the network, a decoder, a literal, a file written in this line. */
  code(
    name: string,
    words: Word[],
    cmd: SimpleCommand,
    cwd: string | undefined,
    flows: { input: Flow; subs: Flow; out: Flow },
    depth: number,
  ): void {
    const { input, subs } = flows;
    const runner = isInterpreter(name) || name === "eval" || name === "source" || name === ".";
    const program = this.abs(words[0] as Word, cwd);
    const ranFile = (words[0]?.text.includes("/") ? program : undefined) ?? this.scriptFile(name, words, cwd);
    const fileFlow = ranFile !== undefined ? this.files.get(ranFile) : undefined;
    if (fileFlow !== undefined) {
      this.note("dynamic", `runs ${ranFile}, written in the same command`);
      if (fileFlow.has("fetch")) this.note("remoteCode", `runs ${ranFile}, downloaded in the same command`);
      if (fileFlow.has("decode")) this.note("decodedCode", `runs ${ranFile}, decoded in the same command`);
    }
    if (
      this.functions.has(name) &&
      input.has("fetch") &&
      callsInterpreter(this.functions.get(name) as Script)
    )
      this.note("remoteCode", `a download piped into ${name}(), which runs an interpreter`);
    if (!runner) return;
    if (subs.has("fetch")) this.note("remoteCode", `${name} runs code substituted from a download`);
    if (subs.has("decode")) this.note("decodedCode", `${name} runs decoded code`);
    if (name === "eval") this.note("dynamic", "eval");
    if (name === "alias") return;
    const inline = inlineCode(name, words);
    if (inline !== undefined && !isShell(name)) this.note("dynamic", `${name} with inline code`);
    if (inline !== undefined && !inline.dynamic && REVERSE_CODE.some((re) => re.test(inline.text)))
      this.note("reverseShell", `${name} inline code opens a shell on a socket`);
    if (inline?.fromStdin === true || (inline?.dynamic && isShell(name)))
      this.note("dynamic", `${name} -c with code from an expansion`);
    if ((name === "source" || name === ".") && (words[1]?.dynamic ?? true))
      this.note("dynamic", `${name} of an unknown file`);
    if (!readsCodeFromStdin(name, words)) return;
    this.note("dynamic", `${name} runs code from its input`);
    flows.out.add("shell");
    if (input.has("fetch")) this.note("remoteCode", `a download piped into ${name}`);
    if (input.has("decode")) this.note("decodedCode", `decoded data piped into ${name}`);
    if (input.has("network")) this.note("reverseShell", `${name} wired to a network tool`);
    // A literal script fed to a shell (a heredoc, echo '…' | sh) is read like sh -c '…'.
    const texts = [...input].filter((f) => f.startsWith("lit:")).map((f) => f.slice(4));
    if (cmd.stdin !== undefined && !cmd.stdin.dynamic) texts.push(cmd.stdin.text);
    for (const text of isShell(name) ? texts.slice(0, 8) : []) {
      const p = parseShell(text, { home: this.ctx.profile.home });
      if (p.ok) this.script(p.script, cwd, new Set(), depth + 1);
    }
  }

  scriptFile(name: string, words: readonly Word[], cwd: string | undefined): string | undefined {
    if (name === "source" || name === ".") return words[1] ? this.abs(words[1], cwd) : undefined;
    if (!isInterpreter(name) || inlineCode(name, words) !== undefined) return undefined;
    const s = scriptOperand(name, words);
    return s === undefined ? undefined : this.abs(s, cwd);
  }
}

/** The harmful findings of a parsed script. Never throws. */
export function shellHarm(script: Script, ctx: HarmContext): ShellFindings {
  const h = new Harm(ctx);
  try {
    h.script(script, ctx.cwd, new Set(), 0);
  } catch {
    h.note("dynamic", "the command could not be analysed");
  }
  return h.out;
}
