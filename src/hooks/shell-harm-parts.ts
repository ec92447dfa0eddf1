// Pieces of the harm analysis (shell-harm.ts) that need no state: what a command prints when
// it is all literal, the paths a word may name, what a function body calls, the signatures
// of inline code that opens a shell on a socket, DNS lookups of a command's output.
import type { Script, SimpleCommand, Word } from "./shell.js";
import { isInterpreter, programName } from "./shell-programs.js";

const MAX_DEPTH = 32;

/** Inline code that connects a process to a socket: /dev/tcp, gawk's /inet, a socket plus dup2/pty/exec. */
export const REVERSE_CODE = [
  /\/dev\/(tcp|udp)\/|\/inet\/(tcp|udp)\//,
  /^(?=[\s\S]*socket)(?=[\s\S]*(dup2|pty\.spawn|subprocess|os\.exec|popen|exec\s*\(|spawn\s*\(|system\s*\(|child_process))/i,
  /fsockopen|TCPSocket\.(new|open)[\s\S]*(exec|spawn|system|IO\.popen)/i,
];

/** What cat <<EOF, echo '…' or printf '…' write when it is all literal. */
export function literalOutput(name: string, words: readonly Word[], cmd: SimpleCommand): string | undefined {
  const args = words.slice(1);
  if (args.some((w) => w.dynamic)) return undefined;
  if (name === "cat" && args.length === 0 && cmd.stdin && !cmd.stdin.dynamic) return cmd.stdin.text;
  if (name === "echo" || name === "printf")
    return args
      .map((w) => w.text)
      .filter((t) => !/^-[neE]+$/.test(t))
      .join(" ");
  return undefined;
}

/** A word's path candidates: itself, after `@` (curl -d @f), after `=` / `=@` (--post-file=f, -F x=@f). */
export function candidates(text: string): string[] {
  const out = [text];
  const at = text.indexOf("@");
  if (at >= 0 && at < 64) out.push(text.slice(at + 1));
  const eq = text.indexOf("=");
  if (eq > 0 && eq < 64) out.push(text.slice(eq + 1).replace(/^[<@]/, ""));
  return out.filter((t) => t !== "" && t !== "-");
}

function commandsOf(s: Script): SimpleCommand[] {
  const out: SimpleCommand[] = [];
  const walk = (x: Script, d: number) => {
    if (d > MAX_DEPTH) return;
    for (const it of x.items) {
      if (it.kind === "command") out.push(it.command);
      else if (it.kind === "group") walk(it.script, d + 1);
      else if (it.kind === "pipeline") for (const st of it.stages) walk(st, d + 1);
      else walk(it.body, d + 1);
    }
  };
  walk(s, 0);
  return out;
}

export function selfCalls(body: Script, name: string): number {
  return commandsOf(body).filter((c) => c.words[0]?.text === name).length;
}

export function callsInterpreter(body: Script): boolean {
  return commandsOf(body).some((c) => isInterpreter(programName(c.words)));
}

/** dig / nslookup / host / ping of a name built from a command's output (DNS exfiltration). */
export function looksUpOutput(name: string, words: readonly Word[], substituted: boolean): boolean {
  return (
    /^(dig|nslookup|host|drill|ping|ping6|getent)$/.test(name) && substituted && words.some((w) => w.dynamic)
  );
}
