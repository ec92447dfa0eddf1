// The files a known writer writes, from its words (the first one the program, wrappers
// already stripped by shell-commands.ts). A program whose name is an expansion ($X, $( … ))
// may be anything: every operand counts as a target.
import { basename, dirname } from "node:path";
import type { Word } from "./shell.js";
import { operands, optionValues, refs, type WriteRef } from "./shell-commands.js";

const set = (...xs: string[]) => new Set(xs);

/** Writers whose every operand is a target, and the options of each that take a value. */
const ALL_OPERANDS: Readonly<Record<string, ReadonlySet<string>>> = {
  tee: set(),
  touch: set("-r", "-d", "-t", "--reference", "--date"),
  mkdir: set("-m", "--mode"),
  rm: set(),
  rmdir: set(),
  unlink: set(),
  shred: set("-n", "-s", "--iterations", "--size", "--random-source"),
  truncate: set("-s", "-r", "--size", "--reference"),
  mkfifo: set("-m", "--mode"),
};

/** Writers whose first operand is not a file (a mode, an owner). */
const AFTER_FIRST: Readonly<Record<string, ReadonlySet<string>>> = {
  chmod: set(),
  chown: set(),
  chgrp: set(),
};

/** cp / install / mv / ln: -t DIR, else the destination (mv: the sources too, they go away). */
function copyLike(name: string, args: readonly Word[]): WriteRef[] {
  const values = set("-S", "--suffix", "-m", "-o", "-g", "--mode", "--owner", "--group", "-T");
  const ops = operands(args, values);
  const targetDir = optionValues(args, ["-t"], ["--target-directory"]);
  if (name === "install" && args.some((w) => w.text === "-d")) return refs(ops, "install -d");
  if (name === "mv") return refs([...targetDir, ...ops], "mv");
  if (targetDir.length > 0) return refs(targetDir, name);
  if (name === "ln") return link(args, ops);
  return ops.length >= 2 ? refs(ops.slice(-1), name) : [];
}

/** ln: the link it creates, and for a symbolic link its target (a link out of the workspace). */
function link(args: readonly Word[], ops: Word[]): WriteRef[] {
  const symbolic = args.some((w) => !w.dynamic && (/^-[a-zA-Z]*s/.test(w.text) || w.text === "--symbolic"));
  const target = ops[0];
  if (target === undefined) return [];
  const linkWord: Word =
    ops.length >= 2
      ? (ops[ops.length - 1] as Word)
      : { text: basename(target.text), dynamic: target.dynamic };
  const out: WriteRef[] = [{ word: linkWord, via: "ln" }];
  if (symbolic) {
    const dir = linkWord.dynamic ? undefined : dirname(linkWord.text);
    for (const t of ops.length >= 2 ? ops.slice(0, -1) : ops) {
      const word = dir === undefined && !t.text.startsWith("/") ? { text: t.text, dynamic: true } : t;
      out.push({ word, via: "ln -s (link target)", ...(dir !== undefined ? { relativeTo: dir } : {}) });
    }
  }
  return out;
}

/** sed -i / perl -i: the files after the script. */
function inPlace(name: string, args: readonly Word[]): WriteRef[] {
  const flag = name === "sed" ? /^(-[nrEsuzl0-9]*i|--in-place)/ : /^-[a-zA-Z0-9]*i/;
  if (!args.some((w) => !w.dynamic && flag.test(w.text))) return [];
  const scriptOpts = name === "sed" ? ["-e", "-f", "--expression", "--file"] : ["-e", "-E"];
  const values = set(...scriptOpts, "-l", "-M", "-I", "-m");
  const ops = operands(args, values);
  const hasScript = args.some(
    (w) => scriptOpts.includes(w.text) || scriptOpts.some((o) => w.text.startsWith(`${o}=`)),
  );
  return refs(hasScript ? ops : ops.slice(1), `${name} -i`);
}

/** tar extracts with x in its first (bundled) argument, -x or --extract/--get. */
function extracting(args: readonly Word[]): boolean {
  const first = args[0]?.text ?? "";
  if (/^[a-zA-Z]*x/.test(first)) return true;
  return args.some((w) => /^-[a-zA-Z]*x/.test(w.text) || w.text === "--extract" || w.text === "--get");
}

/** Keys of a repository's git config that make git run code or send data elsewhere. */
const RISKY_GIT_KEY =
  /^(core\.|alias\.|filter\.|diff\..*\.textconv|merge\..*\.driver|credential|include|url\.|http\.|remote\..*\.(receivepack|uploadpack)|.*sshcommand)/i;

/** git config NAME VALUE: the config file it writes (--global ~/.gitconfig, --system, --file, the repository's). */
function gitConfig(args: readonly Word[], home: string): WriteRef[] {
  const i = args.findIndex((w) => w.text === "config");
  if (i < 0 || args.slice(0, i).some((w) => !w.text.startsWith("-"))) return [];
  const rest = args.slice(i + 1);
  const reads =
    /^(--get|--get-all|--get-regexp|--get-urlmatch|-l|--list|--show-origin|--show-scope|--name-only|-e|--edit)$/;
  if (rest.some((w) => reads.test(w.text))) return [];
  const file = optionValues(rest, ["-f"], ["--file"])[0];
  const ops = operands(rest, new Set(["-f", "--file", "--type", "--blob", "--default"]));
  if (
    ops.length < 2 &&
    !rest.some((w) => /^--(unset|unset-all|add|replace-all|rename-section|remove-section)$/.test(w.text))
  )
    return [];
  const via = "git config";
  if (file) return [{ word: file, via }];
  if (rest.some((w) => w.text === "--global"))
    return [{ word: { text: `${home}/.gitconfig`, dynamic: home === "" }, via }];
  if (rest.some((w) => w.text === "--system"))
    return [{ word: { text: "/etc/gitconfig", dynamic: false }, via }];
  const key = ops[0];
  if (key === undefined || (!key.dynamic && !RISKY_GIT_KEY.test(key.text))) return [];
  return [{ word: { text: ".git/config", dynamic: false }, via }];
}

/** The files one command writes (beyond its redirections). */
export function commandWrites(words: readonly Word[], home = ""): WriteRef[] {
  const first = words[0];
  if (first === undefined) return [];
  const args = words.slice(1);
  if (first.dynamic) return refs(operands(args), "a command named by an expansion");
  const name = basename(first.text);
  const all = ALL_OPERANDS[name];
  if (all) return refs(operands(args, all), name);
  const afterFirst = AFTER_FIRST[name];
  if (afterFirst) {
    if (args.some((w) => w.text.startsWith("--reference"))) return refs(operands(args, afterFirst), name);
    return refs(operands(args, afterFirst).slice(1), name);
  }
  switch (name) {
    case "cp":
    case "mv":
    case "install":
    case "ln":
      return copyLike(name, args);
    case "rsync":
    case "scp": {
      const ops = operands(args, set("-e", "-i", "-P", "-o", "-F", "--rsh", "--exclude", "--include"));
      return ops.length >= 2 ? refs(ops.slice(-1), name) : [];
    }
    case "tar":
      return extracting(args) ? refs(optionValues(args, ["-C"], ["--directory"]), "tar -x") : [];
    case "unzip":
      return refs(optionValues(args, ["-d"], []), "unzip -d");
    case "dd":
      return args
        .filter((w) => w.text.startsWith("of="))
        .map((w) => ({ word: { text: w.text.slice(3), dynamic: w.dynamic }, via: "dd of=" }));
    case "sed":
    case "perl":
      return inPlace(name, args);
    case "git":
      return gitConfig(args, home);
    case "curl":
      return refs(
        optionValues(args, ["-o", "-D", "-c"], ["--output", "--dump-header", "--cookie-jar"]),
        "curl",
      );
    case "wget":
      return refs(
        optionValues(
          args,
          ["-O", "-P", "-o", "-a"],
          ["--output-document", "--directory-prefix", "--output-file", "--append-output"],
        ),
        "wget",
      );
    default:
      return [];
  }
}
