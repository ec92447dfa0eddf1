// What one simple command means (shell-writes.ts, shell-harm.ts): `unwrap` strips env
// assignments and wrappers (sudo, doas, env, nohup, time, nice, timeout, stdbuf, setsid,
// command, builtin, exec, xargs) and opens nested shells (bash|sh|zsh|dash|ksh -c '…', eval,
// env -S, find -exec … ; / -delete) — the shell, eval and find commands themselves stay in
// the list for the harm analysis; `commandWrites` names the files a known writer writes.
import { basename } from "node:path";
import { type ParseResult, parseShell, type Script, type Word } from "./shell.js";

export interface WriteRef {
  word: Word;
  /** How the target is written ("tee", "cp", "sed -i", …). */
  via: string;
  /** A directory the target is relative to instead of the current one (a symbolic link's). */
  relativeTo?: string;
}

export type NestedScript =
  | { ok: true; script: Script; via: string }
  | { ok: false; reason: string; via: string };

export interface Unwrapped {
  /** The simple commands left once wrappers are stripped (their first word the program). */
  commands: Word[][];
  scripts: NestedScript[];
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;
const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "busybox"]);
const PLAIN_WRAPPERS = new Set([
  "nohup",
  "unshare",
  "torsocks",
  "proxychains",
  "proxychains4",
  "catchsegv",
  "caffeinate",
  "sg",
  "time",
  "command",
  "builtin",
  "exec",
  "setsid",
  "chronic",
  "unbuffer",
]);
/** Options of wrappers that take a value in the next word. */
const WRAPPER_VALUES: Readonly<Record<string, ReadonlySet<string>>> = {
  sudo: new Set(["-u", "-g", "-C", "-h", "-p", "-U", "-r", "-t", "-D", "-R", "-T"]),
  doas: new Set(["-u", "-C"]),
  env: new Set(["-u", "-C", "--unset", "--chdir"]),
  nice: new Set(["-n", "--adjustment"]),
  ionice: new Set(["-c", "-n", "-p"]),
  timeout: new Set(["-k", "-s", "--kill-after", "--signal"]),
  stdbuf: new Set(["-i", "-o", "-e"]),
  chrt: new Set(["-p"]),
  taskset: new Set(["-p"]),
  flock: new Set(["-w", "-E", "--timeout", "--conflict-exit-code"]),
  strace: new Set(["-o", "-e", "-p", "-s", "-u", "-E"]),
  ltrace: new Set(["-o", "-e", "-p", "-s", "-u"]),
  xargs: new Set([
    "-I",
    "-i",
    "-n",
    "-P",
    "-L",
    "-l",
    "-d",
    "-a",
    "-E",
    "-e",
    "-s",
    "-R",
    "--max-args",
    "--max-procs",
    "--delimiter",
    "--arg-file",
    "--replace",
  ]),
};

const isOption = (w: Word) => !w.dynamic && w.text.length > 1 && w.text.startsWith("-");

/** The index of the first word after `from` that is not an option of this wrapper. */
function skipOptions(words: readonly Word[], from: number, values: ReadonlySet<string>): number {
  let i = from;
  while (i < words.length) {
    const w = words[i] as Word;
    if (w.text === "--" && !w.dynamic) return i + 1;
    if (!isOption(w)) return i;
    i += values.has(w.text) ? 2 : 1;
  }
  return i;
}

function nested(text: string, via: string, home: string, dynamic: boolean): NestedScript {
  if (dynamic) return { ok: false, reason: "runs a script that depends on an expansion", via };
  const r: ParseResult = parseShell(text, { home });
  return r.ok ? { ok: true, script: r.script, via } : { ok: false, reason: r.reason, via };
}

/** find: -exec/-execdir/-ok … ; as commands ({} unknown), -delete and -fprint as writes. */
function findParts(words: readonly Word[], out: Unwrapped, queue: Word[][]): void {
  const roots: Word[] = [];
  let i = 1;
  while (i < words.length && !/^[-(!]/.test((words[i] as Word).text)) roots.push(words[i++] as Word);
  for (; i < words.length; i++) {
    const t = (words[i] as Word).text;
    if (/^-(exec|execdir|ok|okdir)$/.test(t)) {
      const cmd: Word[] = [];
      for (i++; i < words.length && !/^[;+]$/.test((words[i] as Word).text); i++) {
        const w = words[i] as Word;
        cmd.push(w.text.includes("{}") ? { text: "", dynamic: true } : w);
      }
      if (cmd.length > 0) queue.push(cmd);
    } else if (t === "-delete") out.commands.push([{ text: "rm", dynamic: false }, ...roots]);
    else if (/^-(fprint|fprint0|fprintf|fls)$/.test(t) && words[i + 1]) {
      out.commands.push([{ text: "touch", dynamic: false }, words[i + 1] as Word]);
    }
  }
}

/**
 * xargs: the command it runs. The arguments come from stdin, unknown to the parser: with
 * -I R / -i / --replace=R the words holding R are unknown, otherwise one unknown word is
 * appended (where xargs puts them).
 */
function xargsCommand(w: readonly Word[]): Word[] {
  const start = skipOptions(w, 1, WRAPPER_VALUES.xargs as ReadonlySet<string>);
  let replace: string | undefined;
  for (let i = 1; i < start; i++) {
    const t = (w[i] as Word).text;
    if (t === "-I" || t === "--replace") replace = w[i + 1]?.text;
    else if (t === "-i") replace = "{}";
    else if (/^-I./.test(t)) replace = t.slice(2);
    else if (/^(-i|--replace=)./.test(t)) replace = t.slice(t.indexOf(t.startsWith("-i") ? "i" : "=") + 1);
  }
  const cmd = w.slice(start);
  const unknown: Word = { text: "", dynamic: true, fromStdin: true };
  if (replace === undefined || replace === "") return [...cmd, unknown];
  return cmd.map((x) => (x.text.includes(replace) ? unknown : x));
}

/** A shell's -c script: the word after the first option cluster containing "c". */
function shellScript(words: readonly Word[], home: string): NestedScript | undefined {
  for (let i = 1; i < words.length; i++) {
    const w = words[i] as Word;
    if (!isOption(w)) return undefined;
    if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(w.text)) {
      const script = words[i + 1];
      if (script === undefined) return undefined;
      return nested(script.text, `${basename(words[0]?.text ?? "sh")} -c`, home, script.dynamic);
    }
  }
  return undefined;
}

/** su / runuser / script: the command string after -c / --command (anywhere among the options). */
function commandOption(words: readonly Word[], home: string): NestedScript | undefined {
  for (let i = 1; i < words.length; i++) {
    const t = (words[i] as Word).text;
    const glued = /^--command=(.*)$/s.exec(t);
    if (glued) return nested(glued[1] as string, `${basename(words[0]?.text ?? "su")} -c`, home, false);
    if (t === "-c" || t === "--command" || /^-[a-zA-Z]*c$/.test(t)) {
      const script = words[i + 1];
      return script && nested(script.text, `${basename(words[0]?.text ?? "su")} -c`, home, script.dynamic);
    }
  }
  return undefined;
}

/** Strips wrappers and opens nested shells, up to 32 steps. */
export function unwrap(words: readonly Word[], home: string): Unwrapped {
  const out: Unwrapped = { commands: [], scripts: [] };
  const queue: Word[][] = [[...words]];
  for (let steps = 0; queue.length > 0 && steps < 32; steps++) {
    let w = queue.shift() as Word[];
    while (w.length > 0 && ASSIGNMENT.test((w[0] as Word).text)) w = w.slice(1);
    const first = w[0];
    if (first === undefined) continue;
    const name = first.dynamic ? "" : basename(first.text);
    if (name === "busybox") {
      queue.push(w.slice(1));
      continue;
    }
    if (name in WRAPPER_VALUES && name !== "env" && name !== "xargs") {
      let i = skipOptions(w, 1, WRAPPER_VALUES[name] as ReadonlySet<string>);
      if (name === "timeout" || name === "chrt" || name === "flock") i++; // the duration, priority or lock file
      if (name === "taskset" && !w.some((x) => x.text === "-p")) i++; // the CPU mask
      queue.push(w.slice(i));
    } else if (name === "env") {
      let i = 1;
      for (; i < w.length; i++) {
        const t = (w[i] as Word).text;
        if (t === "-S" || t === "--split-string") {
          const s = w[i + 1];
          if (s) out.scripts.push(nested(s.text, "env -S", home, s.dynamic));
          i = w.length;
        } else if (WRAPPER_VALUES.env?.has(t)) i++;
        else if (!isOption(w[i] as Word) && !ASSIGNMENT.test(t)) break;
      }
      queue.push(w.slice(i));
    } else if (name === "xargs") {
      queue.push(xargsCommand(w));
    } else if (PLAIN_WRAPPERS.has(name)) queue.push(w.slice(skipOptions(w, 1, new Set())));
    else if (name === "su" || name === "runuser" || name === "script") {
      const s = commandOption(w, home);
      if (s) out.scripts.push(s);
      out.commands.push(w);
    } else if (SHELLS.has(name)) {
      const s = shellScript(w, home);
      if (s) out.scripts.push(s);
      out.commands.push(w);
    } else if (name === "eval") {
      out.commands.push(w);
      const rest = w.slice(1);
      out.scripts.push(
        nested(
          rest.map((x) => x.text).join(" "),
          "eval",
          home,
          rest.some((x) => x.dynamic),
        ),
      );
    } else if (name === "find") {
      out.commands.push(w);
      findParts(w, out, queue);
    } else out.commands.push(w);
  }
  return out;
}

/** Operands of a command: words that are not options (or option values), "--" honoured. */
function operands(args: readonly Word[], values: ReadonlySet<string> = new Set()): Word[] {
  const out: Word[] = [];
  let done = false;
  for (let i = 0; i < args.length; i++) {
    const w = args[i] as Word;
    if (done || !isOption(w)) out.push(w);
    else if (w.text === "--") done = true;
    else if (values.has(w.text)) i++;
  }
  return out;
}

/** The value of an option: "-o V", "-oV", "-sSo V" (a cluster), "--output V", "--output=V"; "-" is stdout. */
function optionValues(args: readonly Word[], short: string[], long: string[]): Word[] {
  const out: Word[] = [];
  for (let i = 0; i < args.length; i++) {
    const w = args[i] as Word;
    if (w.dynamic || !w.text.startsWith("-")) continue;
    let value: Word | undefined;
    if (long.includes(w.text)) value = args[++i];
    else if (w.text.startsWith("--")) {
      const l = long.find((o) => w.text.startsWith(`${o}=`));
      if (l) value = { text: w.text.slice(l.length + 1), dynamic: false };
    } else {
      const letters = short.map((o) => o.slice(1)).join("");
      const m = new RegExp(`^-[a-zA-Z0-9]*?([${letters}])(.*)$`).exec(w.text);
      if (m) value = m[2] ? { text: m[2], dynamic: false } : args[++i];
    }
    if (value && value.text !== "-") out.push(value);
  }
  return out;
}

const refs = (words: readonly Word[], via: string): WriteRef[] => words.map((word) => ({ word, via }));

export { operands, optionValues, refs };
