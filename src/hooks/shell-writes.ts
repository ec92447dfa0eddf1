// Where a shell command writes (docs/hooks-shell.md): over the parsed script
// (shell.ts), the targets of redirections (> >> >| &> &>> <> >&file), of tee, cp, mv,
// install, ln, dd of=, sed -i / perl -i, touch, mkdir, rm, rmdir, truncate, chmod, chown,
// chgrp, unlink, shred, curl -o, wget -O and find -delete; through env prefixes, wrappers
// (sudo, env, nohup, time, nice, timeout, command, exec, xargs, find -exec) and nested
// shells (bash -c '…', eval, $( … ), `…`, <( … )), with `cd` followed in order (scoped by
// subshells). Each target is resolved against the current directory (~, .., absolute) and
// then against the workspace with symbolic links resolved (placePath). A target the
// parser cannot know ($VAR, $( … ), a cd into one) is `unresolved`.

import { tmpdir } from "node:os";
import { isAbsolute, resolve } from "node:path";
import type { CodingProfileConfig } from "./coding-profile.js";
import { isWithin } from "./coding-profile.js";
import {
  type Item,
  loadShellParser,
  parseShell,
  type Script,
  type SimpleCommand,
  type Word,
} from "./shell.js";
import { unwrap, type WriteRef } from "./shell-commands.js";
import { commandWrites } from "./shell-writers.js";
import { placePath, realPlace } from "./taxonomy.js";

export interface ShellWrites {
  /** False when the command could not be parsed (then nothing else is known). */
  parsed: boolean;
  reason?: string;
  /** Absolute targets outside the workspace. */
  outside: string[];
  /** Absolute targets inside it. */
  inside: string[];
  /** Absolute targets in the temp directory (scratch files; a link out of it is outside). */
  scratch?: string[];
  /** Targets whose value depends on an expansion (how each was written). */
  unresolved: string[];
}

export interface ShellContext {
  /** The shell's starting directory (absolute); default the workspace. */
  cwd?: string | undefined;
  workspace: string | undefined;
  home: string;
  /** Warden's state directories (protected) and the operator's profile additions. */
  stateDirs?: readonly string[];
  profile?: Partial<CodingProfileConfig>;
}

/** Files every process may write without leaving anything behind. */
const HARMLESS = /^\/dev\/(null|stdout|stderr|tty|fd\/\d+)$|^\/proc\/self\/fd\/\d+$/;

const MAX_TARGETS = 64;

/** The temp directories, as their real paths. */
const TEMP = [...new Set([tmpdir(), "/tmp", "/var/tmp"].map((d) => realPlace(d)))];

/** A target whose real place (links resolved) is in a temp directory and not in HOME. */
function isScratch(abs: string, home: string): boolean {
  const real = realPlace(abs);
  return TEMP.some((t) => real !== t && isWithin(real, t)) && !isWithin(real, realPlace(home));
}

class Walker {
  readonly out: ShellWrites = { parsed: true, outside: [], inside: [], unresolved: [] };

  constructor(readonly ctx: ShellContext) {}

  target(ref: WriteRef, cwd: string | undefined): void {
    const { word } = ref;
    const total =
      this.out.outside.length +
      this.out.inside.length +
      this.out.unresolved.length +
      (this.out.scratch?.length ?? 0);
    if (total >= MAX_TARGETS) return;
    if (word.dynamic || (cwd === undefined && !isAbsolute(word.text))) {
      this.out.unresolved.push(`${ref.via} ${word.text || "(expansion)"}`.slice(0, 512));
      return;
    }
    const abs = resolve(cwd ?? "/", ref.relativeTo ?? ".", word.text);
    if (HARMLESS.test(abs)) return;
    const placed = placePath(abs, this.ctx.workspace);
    if (!placed.inWorkspace && isScratch(abs, this.ctx.home)) {
      this.out.scratch ??= [];
      this.out.scratch.push(abs);
    } else (placed.inWorkspace ? this.out.inside : this.out.outside).push(abs);
  }

  /** cd / pushd: the next directory, or undefined when unknown. */
  cd(words: readonly Word[], cwd: string | undefined): string | undefined {
    return nextCwd(words, cwd, this.ctx.home);
  }

  command(cmd: SimpleCommand, cwd: string | undefined, depth: number): string | undefined {
    this.redirects(cmd, cwd);
    for (const n of cmd.nested) this.script(n, cwd, depth + 1);
    const u = unwrap(cmd.words, this.ctx.home);
    for (const s of u.scripts) {
      if (s.ok) this.script(s.script, cwd, depth + 1);
      else this.out.unresolved.push(`${s.via} ${s.reason}`.slice(0, 512));
    }
    for (const inner of u.commands) {
      const name = inner[0]?.text ?? "";
      if (name === "cd" || name === "pushd") cwd = this.cd(inner, cwd);
      else if (name === "popd") cwd = undefined;
      for (const ref of commandWrites(inner, this.ctx.home)) this.target(ref, cwd);
    }
    return cwd;
  }

  /** Redirections of a command or a group: the files they write. */
  redirects(cmd: Pick<SimpleCommand, "redirects">, cwd: string | undefined): void {
    for (const r of cmd.redirects) {
      const dup = (r.op === ">&" || r.op === "<&") && /^(\d+|-)$/.test(r.target.text);
      if (/^(>|>>|>\||&>|&>>|<>|>&)$/.test(r.op) && !dup) this.target({ word: r.target, via: r.op }, cwd);
    }
  }

  item(item: Item, cwd: string | undefined, depth: number): string | undefined {
    switch (item.kind) {
      case "command":
        return this.command(item.command, cwd, depth);
      case "group": {
        this.redirects(item, cwd);
        for (const n of item.nested) this.script(n, cwd, depth + 1);
        const after = this.script(item.script, cwd, depth + 1);
        return item.subshell ? cwd : after;
      }
      case "pipeline":
        // Each stage runs in a subshell: a cd inside one does not outlive the pipeline.
        for (const stage of item.stages) this.script(stage, cwd, depth + 1);
        return cwd;
      case "function":
        this.script(item.body, cwd, depth + 1);
        return cwd;
    }
  }

  script(s: Script, cwd: string | undefined, depth: number): string | undefined {
    for (const item of s.items) cwd = this.item(item, cwd, depth);
    return cwd;
  }
}

/** cd / pushd: the next directory, or undefined when unknown. */
export function nextCwd(words: readonly Word[], cwd: string | undefined, home: string): string | undefined {
  const args = words.slice(1).filter((w) => !/^-[LPe@]+$/.test(w.text));
  const to = args[0];
  if (to === undefined) return home;
  if (to.dynamic || to.text === "-") return undefined;
  if (isAbsolute(to.text)) return resolve(to.text);
  return cwd === undefined ? undefined : resolve(cwd, to.text);
}

/** The files a shell command line writes, placed against the workspace. Never throws. */
export async function shellWrites(command: string, ctx: ShellContext): Promise<ShellWrites> {
  await loadShellParser().catch(() => undefined);
  return shellWritesSync(command, ctx);
}

/** `shellWrites` once the parser is loaded (`loadShellParser`); unparsed before. */
export function shellWritesSync(command: string, ctx: ShellContext): ShellWrites {
  const parsed = parseShell(command, { home: ctx.home });
  if (!parsed.ok) return { parsed: false, reason: parsed.reason, outside: [], inside: [], unresolved: [] };
  return scriptWrites(parsed.script, ctx);
}

/** The writes of an already parsed script. Never throws. */
export function scriptWrites(script: Script, ctx: ShellContext): ShellWrites {
  const w = new Walker(ctx);
  const start = ctx.cwd !== undefined && isAbsolute(ctx.cwd) ? resolve(ctx.cwd) : ctx.workspace;
  try {
    w.script(script, start, 0);
  } catch {
    return {
      parsed: false,
      reason: "the command could not be analysed",
      outside: [],
      inside: [],
      unresolved: [],
    };
  }
  return w.out;
}
