// The state of one harm analysis (shell-harm.ts): findings, functions defined, files written
// earlier in the line with what went into them, sockets and named pipes seen; and the checks
// that only need that state — redirections and credential paths.
import { basename, isAbsolute, resolve } from "node:path";
import { type CodingProfile, isCredentialPath } from "./coding-profile.js";
import type { Script, SimpleCommand, Word } from "./shell.js";
import { globMayNameCredential, hasGlob } from "./shell-globs.js";
import { candidates } from "./shell-harm-parts.js";
import { commandWrites } from "./shell-writers.js";

/** Programs that create or fill the files they write (not `rm`, `shred`, `truncate`: those keep their old rules). */
const CREATORS = new Set(["cp", "install", "mv", "ln", "tee", "dd", "curl", "wget", "touch"]);
/** Programs whose write operands are also read (an in-place edit): none of their words is only a destination. */
const READS_WHAT_IT_WRITES = new Set(["sed", "perl"]);
/** Programs whose write operands include sources (mv removes them, ln -s names its target): only the destination counts. */
const SOURCES_ARE_WRITTEN = new Set(["mv", "ln"]);

/**
 * The words of one command that are only where it writes — `cp`/`install`'s destination,
 * `mv`/`ln`'s last operand or `-t` directory, `tee`'s files, `dd of=`, `curl -o` — never a
 * word it also reads. Compared by identity: a source spelled like the destination
 * (`curl -T .env -o .env`) is still a read. Naming a credential file there creates or
 * replaces it; it does not read it (docs/hooks-shell.md "Write targets and read operands").
 */
export function destinationWords(words: readonly Word[], home: string): Set<Word> {
  const name = basename(words[0]?.text ?? "");
  const out = new Set<Word>();
  if (words[0]?.dynamic !== false || READS_WHAT_IT_WRITES.has(name) || !CREATORS.has(name)) return out;
  const args = words.slice(1);
  const refs = commandWrites(words, home).map((r) => r.word);
  if (name === "dd") {
    for (const w of args) if (w.text.startsWith("of=")) out.add(w);
    return out;
  }
  if (SOURCES_ARE_WRITTEN.has(name)) {
    const t = args.findIndex((w) => w.text === "-t" || w.text === "--target-directory");
    const dest = t >= 0 ? args[t + 1] : args.at(-1);
    if (dest !== undefined && refs.includes(dest)) out.add(dest);
    return out;
  }
  for (const w of refs) if (args.includes(w)) out.add(w);
  return out;
}

export const FINDINGS = [
  "remoteCode",
  "decodedCode",
  "reverseShell",
  "destructive",
  "wipesMachine",
  "persistence",
  "urlInstall",
  "exfiltration",
  "credentialAccess",
  "wardenCommand",
  "dynamic",
] as const;
export type Finding = (typeof FINDINGS)[number];
export type ShellFindings = Record<Finding, string[]>;

export interface HarmContext {
  cwd: string | undefined;
  profile: CodingProfile;
}

/** What flows out of a command: remote or decoded content, credentials, a network peer, a shell. */
export type Flow = Set<"fetch" | "decode" | "credential" | "network" | "shell" | `lit:${string}`>;
export const union = (...fs: Flow[]): Flow => new Set(fs.flatMap((f) => [...f]));
export const MAX_DEPTH = 32;

export class HarmState {
  readonly out = Object.fromEntries(FINDINGS.map((f) => [f, [] as string[]])) as ShellFindings;
  readonly functions = new Map<string, Script>();
  /** Files written earlier in this line, with what was written into them. */
  readonly files = new Map<string, Flow>();
  sockets = 0;
  fifos = 0;

  constructor(readonly ctx: HarmContext) {}

  note(f: Finding, what: string): void {
    if (this.out[f].length < 16) this.out[f].push(what.slice(0, 256));
  }

  abs(w: Word, cwd: string | undefined): string | undefined {
    if (w.dynamic || w.text === "") return undefined;
    if (isAbsolute(w.text)) return resolve(w.text);
    return cwd === undefined ? undefined : resolve(cwd, w.text);
  }

  redirects(rs: SimpleCommand["redirects"], cwd: string | undefined, out: Flow): void {
    for (const r of rs) {
      const t = r.target.text;
      if (/^\/dev\/(tcp|udp)\//.test(t)) this.note("reverseShell", `${r.op} ${t}`);
      if (/^\/dev\/(sd|hd|vd|xvd|nvme|mmcblk|disk|md)/.test(t) && /[>]/.test(r.op))
        this.note("wipesMachine", `${r.op} ${t}`);
      const abs = this.abs(r.target, cwd);
      if (abs !== undefined && /^(>|>>|>\||&>|&>>)$/.test(r.op))
        this.files.set(abs, union(this.files.get(abs) ?? new Set(), out));
      if (abs !== undefined && /^(<|<>)$/.test(r.op) && isCredentialPath(this.ctx.profile, abs))
        this.note("credentialAccess", `${r.op} ${abs}`);
    }
  }

  credentials(words: readonly Word[], cwd: string | undefined): boolean {
    let found = false;
    const written = destinationWords(words, this.ctx.profile.home);
    for (const w of words.slice(1)) {
      if (written.has(w)) continue;
      for (const text of candidates(w.text)) {
        const abs = this.abs({ text, dynamic: w.dynamic }, cwd);
        if (abs === undefined) continue;
        const named = hasGlob(abs)
          ? globMayNameCredential(abs, this.ctx.profile)
          : isCredentialPath(this.ctx.profile, abs);
        if (named) {
          this.note("credentialAccess", abs);
          found = true;
        }
      }
    }
    return found;
  }
}
