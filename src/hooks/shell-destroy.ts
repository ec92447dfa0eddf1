// Plainly destructive commands (shell-harm.ts): a recursive rm, chmod/chown or find -delete
// of the filesystem root, a system directory, the home directory, the workspace root or any
// of their ancestors (~, $HOME, .., /*, ~/*), shred of home files (destroys); filesystem
// creation, raw disk writes, power-off, kill of every process (wipesMachine).
import { dirname, isAbsolute, resolve } from "node:path";
import { type CodingProfile, isWithin } from "./coding-profile.js";
import type { Word } from "./shell.js";
import { operands } from "./shell-commands.js";

const SYSTEM =
  /^\/(bin|boot|dev|etc|lib|lib32|lib64|libx32|opt|proc|root|run|sbin|srv|sys|usr|var|home|mnt|media|snap|nix|System|Library|Applications|Users)(\/|$)/;
const SCRATCH = /^\/(tmp|var\/tmp|dev\/shm|run\/user\/\d+)(\/|$)/;
const GLOB = /[*?[]/;

interface DestroyContext {
  profile: CodingProfile;
}

/** The directory a path names once a trailing glob segment (/*, /.*) is taken off. */
function globRoot(path: string): string {
  const segs = path.split("/");
  const i = segs.findIndex((s) => GLOB.test(s));
  return i < 0 ? path : segs.slice(0, i).join("/") || "/";
}

/**
 * Whether deleting `abs` (recursively) destroys something that is not the agent's to
 * destroy: /, a system directory, home or its parents, the workspace root or its parents.
 */
export function dangerousTarget(abs: string, ctx: DestroyContext, workspaceRootToo: boolean): boolean {
  const p = resolve(abs);
  const { home, workspace } = ctx.profile;
  if (p === "/" || isWithin(home, p)) return true;
  if (workspace !== undefined && isWithin(workspace, p) && (workspaceRootToo || p !== resolve(workspace)))
    return true;
  if ((workspace !== undefined && isWithin(p, workspace)) || SCRATCH.test(p)) return false;
  if (isWithin(p, home)) return dirname(p) === home && !p.slice(home.length + 1).startsWith(".");
  return SYSTEM.test(p);
}

function place(w: Word, cwd: string | undefined): string | undefined {
  if (w.dynamic || w.text === "") return undefined;
  const text = globRoot(w.text);
  if (isAbsolute(text)) return resolve(text);
  return cwd === undefined ? undefined : resolve(cwd, text);
}

const recursive = (words: readonly Word[]) =>
  words.some((w) => !w.dynamic && (/^-[a-zA-Z]*[rR][a-zA-Z]*$/.test(w.text) || w.text === "--recursive"));

function dangerousOperands(
  ops: readonly Word[],
  cwd: string | undefined,
  ctx: DestroyContext,
  root: boolean,
): string | undefined {
  for (const w of ops) {
    const abs = place(w, cwd);
    if (abs !== undefined && dangerousTarget(abs, ctx, root)) return abs;
  }
  return undefined;
}

/** find ROOTS … -delete / -exec rm: the roots (the workspace root itself is fine: predicates filter). */
function findDeletes(
  words: readonly Word[],
  cwd: string | undefined,
  ctx: DestroyContext,
): string | undefined {
  const deletes =
    words.some((w) => w.text === "-delete") ||
    words.some((w, i) => /^-exec(dir)?$/.test(w.text) && /(^|\/)(rm|shred)$/.test(words[i + 1]?.text ?? ""));
  if (!deletes) return undefined;
  const roots: Word[] = [];
  for (let i = 1; i < words.length && !/^[-(!]/.test((words[i] as Word).text); i++)
    roots.push(words[i] as Word);
  return dangerousOperands(roots, cwd, ctx, false);
}

/** Why this command is plainly destructive, or undefined. */
export function destroys(
  name: string,
  words: readonly Word[],
  cwd: string | undefined,
  ctx: DestroyContext,
): string | undefined {
  const args = words.slice(1);
  const say = (what: string | undefined) => (what === undefined ? undefined : `${name} ${what}`);
  switch (name) {
    case "rm":
      return recursive(args) ? say(dangerousOperands(operands(args), cwd, ctx, true)) : undefined;
    case "chmod":
    case "chown":
    case "chgrp":
      return recursive(args) ? say(dangerousOperands(operands(args).slice(1), cwd, ctx, true)) : undefined;
    case "mv":
      return say(dangerousOperands(operands(args).slice(0, -1), cwd, ctx, true));
    case "find":
      return say(findDeletes(words, cwd, ctx));
    case "shred": {
      const home = ctx.profile.home;
      const hit = operands(args)
        .map((w) => place(w, cwd))
        .find(
          (p) =>
            p !== undefined &&
            (p.startsWith("/dev/") ||
              (isWithin(p, home) && !(ctx.profile.workspace && isWithin(p, ctx.profile.workspace)))),
        );
      return say(hit);
    }
    default:
      return undefined;
  }
}

/** Why this command plainly wipes the machine (disks, filesystems, power, every process), or undefined. */
export function wipesMachine(name: string, words: readonly Word[]): string | undefined {
  const args = words.slice(1);
  if (name === "dd")
    return args.find((w) => /^of=\/dev\/(sd|hd|vd|xvd|nvme|mmcblk|disk|md|dm-|mapper|nbd|loop)/.test(w.text))
      ?.text;
  if (/^(shutdown|reboot|halt|poweroff)$/.test(name)) return name;
  if (name === "kill" && args.some((w) => w.text === "-1")) return "kill -1 (every process)";
  if (/^(mkfs(\..+)?|mke2fs|mkswap|wipefs|sfdisk|sgdisk|parted)$/.test(name)) return name;
  if (name === "fdisk" && !args.some((w) => w.text === "-l")) return name;
  return undefined;
}
