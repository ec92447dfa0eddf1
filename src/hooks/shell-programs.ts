// What a program is, for the harm analysis (shell-harm.ts): interpreters and where they take
// their code from, network tools, decoders, persistence and install commands. Each predicate
// reads one simple command whose wrappers are already stripped (shell-commands.ts `unwrap`),
// its first word the program (a path or a quoted name: the basename counts).
import { basename } from "node:path";
import type { Word } from "./shell.js";
import { operands, optionValues } from "./shell-commands.js";

const SHELLS = /^(sh|bash|zsh|dash|ksh|ash|mksh|yash|fish|csh|tcsh|busybox)$/;
const INTERPRETERS =
  /^(python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|perl[0-9.]*|ruby[0-9.]*|php[0-9.]*|lua[0-9.]*|luajit|tclsh|wish|Rscript|osascript|pwsh|powershell|jshell|groovy|scala|irb|julia)$/;

/** The program's name: the basename of a literal first word; "" when it is an expansion. */
export function programName(words: readonly Word[]): string {
  const first = words[0];
  if (first === undefined || first.dynamic) return "";
  return basename(first.text);
}

export const isShell = (name: string) => SHELLS.test(name);
export const isInterpreter = (name: string) => SHELLS.test(name) || INTERPRETERS.test(name);

/** Options that give an interpreter its code inline, per family. */
const INLINE: readonly [RegExp, RegExp][] = [
  [SHELLS, /^-[a-zA-Z]*c[a-zA-Z]*$/],
  [/^(python[0-9.]*|pypy[0-9.]*)$/, /^-[a-zA-Z]*c/],
  [/^(node|nodejs|bun)$/, /^(-e|-p|--eval|--print|-pe|-ep)$|^--(eval|print)=/],
  [/^(perl[0-9.]*|ruby[0-9.]*|lua[0-9.]*|luajit|Rscript|osascript|irb)$/, /^-[a-zA-Z]*[eE]/],
  [/^php[0-9.]*$/, /^-[a-zA-Z]*r/],
  [/^(pwsh|powershell)$/, /^-(c|command|e|enc|encodedcommand)$/i],
];

/** The inline code an interpreter is given (`python3 -c CODE`), if any. */
export function inlineCode(name: string, words: readonly Word[]): Word | undefined {
  if (name === "deno" && words[1]?.text === "eval") return words[2] ?? { text: "", dynamic: true };
  for (const [family, opt] of INLINE) {
    if (!family.test(name)) continue;
    for (let i = 1; i < words.length; i++) {
      const w = words[i] as Word;
      if (w.dynamic || !w.text.startsWith("-")) break;
      if (opt.test(w.text)) {
        const eq = w.text.indexOf("=");
        if (w.text.startsWith("--") && eq > 0) return { text: w.text.slice(eq + 1), dynamic: false };
        const glued = /^-[a-zA-Z]*c(.+)$/.exec(w.text);
        if (glued && family === INLINE[1]?.[0]) return { text: glued[1] as string, dynamic: false };
        return words[i + 1] ?? { text: "", dynamic: true };
      }
    }
  }
  return undefined;
}

/** Options of interpreters that take a value (the next word is not the script). */
const VALUE_OPTS = new Set([
  "-m",
  "-W",
  "-X",
  "-O",
  "-o",
  "-I",
  "-r",
  "--require",
  "--import",
  "--loader",
  "-x",
]);

/** The script operand an interpreter runs ("-" and /dev/stdin mean its input), or undefined. */
export function scriptOperand(name: string, words: readonly Word[]): Word | undefined {
  for (let i = 1; i < words.length; i++) {
    const w = words[i] as Word;
    if (w.dynamic || !w.text.startsWith("-") || w.text === "-") return w;
    if (w.text === "--") return words[i + 1];
    if (w.text === "-m" && /^python|^pypy/.test(name))
      return { text: `-m ${words[i + 1]?.text ?? ""}`, dynamic: false };
    if (/^-[a-zA-Z]*s$/.test(w.text) && isShell(name)) return { text: "-", dynamic: false };
    if (VALUE_OPTS.has(w.text)) i++;
  }
  return undefined;
}

const STDIN = /^(-|\/dev\/stdin|\/dev\/fd\/0|\/proc\/self\/fd\/0)$/;

/** Whether this command runs code read from its standard input. */
export function readsCodeFromStdin(name: string, words: readonly Word[]): boolean {
  if (name === "source" || name === ".") return STDIN.test(words[1]?.text ?? "");
  if (!isInterpreter(name)) return false;
  const code = inlineCode(name, words);
  if (code !== undefined) return code.fromStdin === true;
  const script = scriptOperand(name, words);
  return script === undefined || (!script.dynamic && STDIN.test(script.text)) || script.fromStdin === true;
}

const FETCHERS = /^(curl|wget|fetch|http|https|xh|aria2c|lwp-request|GET|POST|lynx|links|w3m|ftp|tftp)$/;
const SOCKETS = /^(nc|ncat|netcat|nc\.traditional|nc\.openbsd|socat|telnet|openssl|ssh|sshpass)$/;
const SENDERS = /^(scp|sftp|rsync|rclone|aws|gsutil|az|s3cmd|smbclient|dig|nslookup|host|drill|ping)$/;

/** A program that reads from the network (its output may be remote content). */
export const isFetcher = (name: string) => FETCHERS.test(name) || SOCKETS.test(name);
/** A program that can send data to another host. */
export const isNetworkTool = (name: string) =>
  FETCHERS.test(name) || SOCKETS.test(name) || SENDERS.test(name);
export const isSocketTool = (name: string) => SOCKETS.test(name) && name !== "openssl" && name !== "ssh";

const has = (words: readonly Word[], re: RegExp) => words.slice(1).some((w) => !w.dynamic && re.test(w.text));

/** A program that decodes or unpacks its input (its output is code nobody reviewed). */
export function isDecoder(name: string, words: readonly Word[]): boolean {
  if (/^(base64|base32|basenc|gbase64)$/.test(name)) return has(words, /^(-[a-zA-Z]*[dD]|--decode)$/);
  if (name === "xxd") return has(words, /^-[a-zA-Z]*r/);
  if (name === "openssl") return has(words, /^(-d|base64|enc|-base64|-a)$/);
  if (/^(uudecode|gunzip|zcat|bunzip2|bzcat|unxz|xzcat|unzstd|zstdcat|lzcat|rev|unlzma)$/.test(name))
    return true;
  if (/^(gzip|bzip2|xz|zstd|lzma)$/.test(name))
    return has(words, /^(-[a-zA-Z]*d|--decompress|--uncompress)$/);
  if (name === "tr")
    return words.length >= 3 && /[a-zA-Z]-[a-zA-Z].*[a-zA-Z]-[a-zA-Z]/.test(words[2]?.text ?? "");
  if (name === "printf") return has(words, /\\(x[0-9a-fA-F]|[0-7]{1,3}|u[0-9a-fA-F])/);
  if (name === "echo")
    return has(words, /^-[a-zA-Z]*e/) && has(words, /\\(x[0-9a-fA-F]|0[0-7]|u[0-9a-fA-F])/);
  return false;
}

/** nc -e / -c, socat … exec:, telnet/openssl as a shell's pipe ends: a reverse or bind shell. */
export function reverseShellArgs(name: string, words: readonly Word[]): boolean {
  if (/^(nc|ncat|netcat|nc\.traditional|nc\.openbsd)$/.test(name))
    return has(words, /^(-[a-zA-Z]*[ec][a-zA-Z]*|--exec|--sh-exec|--lua-exec)(=|$)/);
  if (name === "socat") return has(words, /(^|[,!])\s*(exec|system)\s*:/i);
  if (/^[gmn]?awk$/.test(name)) return has(words, /\/inet\/(tcp|udp)\//);
  return false;
}

/** crontab (but -l), systemctl enable…, at, batch, launchctl load…, loginctl enable-linger, systemd-run timers. */
export function persists(name: string, words: readonly Word[]): boolean {
  const args = words.slice(1).map((w) => w.text);
  switch (name) {
    case "crontab":
      return !args.includes("-l");
    case "systemctl":
      return args.some((a) =>
        /^(enable|reenable|link|edit|preset|add-wants|add-requires|set-default)$/.test(a),
      );
    case "at":
    case "batch":
      return !args.some((a) => /^-[lqc]$/.test(a));
    case "launchctl":
      return args.some((a) => /^(load|bootstrap|submit|enable)$/.test(a));
    case "loginctl":
      return args.includes("enable-linger");
    case "systemd-run":
      return args.some((a) => /^--(on-|timer-property)/.test(a));
    default:
      return false;
  }
}

const REMOTE_SPEC =
  /^(https?:|git\+|git:|ssh:|github:|gitlab:|bitbucket:|gist:|file:)|\.(tgz|tar\.gz|tar|whl|zip)$/i;
const GITHUB_SHORTHAND = /^[A-Za-z0-9][\w.-]*\/[\w.-]+(#.*)?$/;

/** The package specs an install command takes from outside the registries (URLs, git, paths). */
export function offRegistryInstall(
  name: string,
  words: readonly Word[],
  isOutside: (path: string) => boolean,
): string | undefined {
  const args = words.slice(1);
  const sub = args.find((w) => !w.text.startsWith("-"))?.text ?? "";
  const path = (t: string) => /^(\/|\.\.?\/|~)/.test(t) && isOutside(t);
  if (/^(npm|pnpm|yarn|bun)$/.test(name) && /^(i|install|add|ci)$/.test(sub)) {
    const specs = operands(args.slice(1), new Set(["--registry", "--prefix", "-C", "--cwd"]));
    const bad = specs.find((w) => REMOTE_SPEC.test(w.text) || GITHUB_SHORTHAND.test(w.text) || path(w.text));
    const registry = optionValues(args, [], ["--registry"])[0];
    return bad?.text ?? (registry ? `--registry ${registry.text}` : undefined);
  }
  if (/^(pip[0-9.]*|uv|pipx)$/.test(name) && args.some((w) => w.text === "install")) {
    const specs = operands(args, new Set(["-r", "--requirement", "-c", "--constraint", "-t", "--target"]));
    const bad = specs.find((w) => REMOTE_SPEC.test(w.text) || path(w.text));
    const index = optionValues(args, ["-i", "-f"], ["--index-url", "--extra-index-url", "--find-links"])[0];
    return bad?.text ?? (index ? `index ${index.text}` : undefined);
  }
  if (name === "cargo" && sub === "install") return optionValues(args, [], ["--git"])[0]?.text;
  if (name === "gem" && sub === "install") return args.find((w) => REMOTE_SPEC.test(w.text))?.text;
  return undefined;
}

/** Package managers a download may be piped into. */
export const isPackageManager = (name: string) =>
  /^(npm|pnpm|yarn|bun|pip[0-9.]*|uv|pipx|gem|cargo)$/.test(name);

/** Warden itself: a program named warden, node …/warden.js, npx warden. */
export function runsWarden(name: string, words: readonly Word[]): boolean {
  if (name === "warden" || name === "warden.js") return true;
  const rest = words.slice(1).filter((w) => !w.text.startsWith("-"));
  const first = rest[0]?.text ?? "";
  if (/^(node|nodejs|bun|deno|tsx|ts-node)$/.test(name))
    return /(^|\/)warden(\.js)?$|(^|\/)warden\/(bin|dist)\//.test(first);
  if (/^(npx|pnpx|bunx)$/.test(name) || (/^(pnpm|yarn|npm)$/.test(name) && /^(exec|dlx|x)$/.test(first)))
    return rest.some((w) => /(^|\/)warden(@.*)?$/.test(w.text));
  return false;
}
