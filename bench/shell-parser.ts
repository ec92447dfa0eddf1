// Which shell parser the hooks use (docs/hooks-shell.md): tree-sitter-bash in web-tree-sitter
// (the dependency, through Warden's model in src/hooks/shell.ts) against sh-syntax (mvdan/sh
// in WebAssembly; measured when installed: `npm i --no-save sh-syntax`). Printed per
// candidate: start-up (a fresh process to its first parse, with `node -e 0` as baseline),
// parse time median / p99 over a corpus, and fidelity against bash itself on a seeded,
// generated corpus: accept/reject as `bash -n`, the words `printf '%s\0' …` receives, and the
// file a `: > TARGET` redirection creates.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadShellParser, parseShell } from "../src/hooks/shell.js";
import { line, rng, target, word } from "./_shell-corpus.js";
import { measure, measureAsync, type Stats } from "./_stats.js";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "../..");
const HOME = "/home/dev";
const N = Number(process.env.SHELL_BENCH_N ?? 300);

interface Parsed {
  ok: boolean;
  /** Words of the first simple command; undefined when the parser's tree does not give them. */
  words?: string[] | undefined;
  redirect?: string | undefined;
  /** The parser said it cannot know the value (an expansion): conservative, not wrong. */
  unknown?: boolean;
}

interface Candidate {
  name: string;
  startup: string;
  parse: (src: string) => Parsed | Promise<Parsed>;
}

function treeSitter(): Candidate {
  return {
    name: "tree-sitter-bash + web-tree-sitter",
    startup: `const m = await import(${JSON.stringify(join(root, "dist/src/hooks/shell.js"))}); await m.loadShellParser(); m.parseShell("echo hi", { home: "/" });`,
    parse: (src) => {
      const p = parseShell(src, { home: HOME });
      if (!p.ok) return { ok: false };
      const first = p.script.items[0];
      if (first?.kind !== "command") return { ok: true };
      const c = first.command;
      const r = c.redirects[0]?.target;
      const unknown = c.words.some((w) => w.dynamic) || r?.dynamic === true;
      return { ok: true, words: c.words.map((w) => w.text), redirect: r?.text, unknown };
    },
  };
}

type ShSyntax = { parse: (s: string) => Promise<Record<string, unknown>> };

async function shSyntax(): Promise<Candidate | undefined> {
  const name = "sh-syntax";
  let mod: ShSyntax;
  try {
    mod = (await import(name)) as ShSyntax;
  } catch {
    return undefined;
  }
  return {
    name: "sh-syntax (mvdan/sh, WebAssembly)",
    startup: `const m = await import("sh-syntax"); await m.parse("echo hi");`,
    parse: async (src) => {
      try {
        const f = await mod.parse(src);
        const stmt = (
          f.Stmts as { Cmd?: { Args?: { Lit?: string }[] }; Redirs?: { Word?: { Lit?: string } }[] }[]
        )[0];
        const args = stmt?.Cmd?.Args;
        // The JSON tree has Cmd and word parts as empty objects: words are only there when literal.
        const words = args?.every((a) => typeof a.Lit === "string")
          ? args.map((a) => a.Lit as string)
          : undefined;
        return { ok: true, words, redirect: stmt?.Redirs?.[0]?.Word?.Lit };
      } catch {
        return { ok: false };
      }
    },
  };
}

function bash(args: string[], cwd?: string): { status: number | null; stdout: string } {
  const r = spawnSync("bash", ["--norc", "--noprofile", ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME, LC_ALL: "C.UTF-8" },
    encoding: "utf8",
  });
  return { status: r.status, stdout: r.stdout };
}

/** Median wall ms of a fresh node process that loads a parser and parses one line. */
function startup(script: string | undefined, runs = 7): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const args = script === undefined ? ["-e", "0"] : ["--input-type=module", "-e", script];
    spawnSync(process.execPath, args, { cwd: root, stdio: "ignore" });
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)] as number;
}

interface Corpus {
  lines: string[];
  lineOk: boolean[];
  wordLines: string[];
  wordsBash: string[][];
  redirLines: string[];
  redirBash: string[];
}

function corpus(): Corpus {
  const r = rng(32);
  const lines = Array.from({ length: N }, () => line(r));
  const lineOk = lines.map((l) => bash(["-n", "-c", l]).status === 0);
  const wordLines = Array.from({ length: N }, () => `printf '%s\\0' ${word(r)} ${word(r)} ${word(r)}`);
  const dir = mkdtempSync(join(tmpdir(), "warden-bench-shell-"));
  const wordsBash = wordLines.map((l) => [
    "printf",
    "%s\\0",
    ...bash(["-c", l], dir).stdout.split("\0").slice(0, -1),
  ]);
  const redirLines = Array.from({ length: Math.ceil(N / 3) }, () => `: > ${target(r)}`);
  const redirBash = redirLines.map((l) => {
    const d = mkdtempSync(join(dir, "r-"));
    bash(["-c", l], d);
    return readdirSync(d).join("/");
  });
  rmSync(dir, { recursive: true, force: true });
  return { lines, lineOk, wordLines, wordsBash, redirLines, redirBash };
}

/** same / unknown (the parser marks an expansion it cannot know) / wrong, against bash. */
async function fidelity(c: Candidate, k: Corpus): Promise<[string, string, string]> {
  const pct = (a: number, n: number) => `${a}/${n} (${((100 * a) / n).toFixed(1)} %)`;
  let agree = 0;
  let refused = 0;
  for (let i = 0; i < k.lines.length; i++) {
    const ok = (await c.parse(k.lines[i] as string)).ok;
    if (ok === k.lineOk[i]) agree++;
    else if (!ok) refused++;
  }
  const syntax = `${pct(agree, k.lines.length)} · ${refused} refused that bash runs · ${k.lines.length - agree - refused} read that bash rejects`;
  const tally = async (
    lines: string[],
    expect: (i: number) => string,
    get: (p: Parsed) => string | undefined,
  ) => {
    let same = 0;
    let unknown = 0;
    for (let i = 0; i < lines.length; i++) {
      const p = await c.parse(lines[i] as string);
      const v = get(p);
      if (v !== undefined && v === expect(i)) same++;
      else if (p.unknown === true) unknown++;
    }
    const wrong = lines.length - same - unknown;
    return `${pct(same, lines.length)} · ${unknown} unknown · ${wrong} wrong`;
  };
  const words = await tally(
    k.wordLines,
    (i) => JSON.stringify(k.wordsBash[i]),
    (p) => (p.words ? JSON.stringify(p.words) : undefined),
  );
  const redirs = await tally(
    k.redirLines,
    (i) => k.redirBash[i] as string,
    (p) => p.redirect,
  );
  return [syntax, words, redirs];
}

async function timing(c: Candidate, k: Corpus): Promise<Stats> {
  const valid = k.lines.filter((_, i) => k.lineOk[i]);
  let i = 0;
  const first = c.parse("echo hi");
  if (first instanceof Promise) {
    await first;
    return measureAsync(c.name, 500, async () => c.parse(valid[i++ % valid.length] as string), 50);
  }
  return measure(c.name, 2000, () => c.parse(valid[i++ % valid.length] as string), 200);
}

async function main(): Promise<void> {
  await loadShellParser();
  const candidates = [treeSitter(), await shSyntax()].filter((c): c is Candidate => c !== undefined);
  const k = corpus();
  const base = startup(undefined);
  const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
  console.log(
    `corpus: ${k.lines.length} lines (${k.lineOk.filter(Boolean).length} valid for bash -n), ${k.wordLines.length} word lines, ${k.redirLines.length} redirections; baseline node -e 0: ${fmt(base)} ms\n`,
  );
  console.log(
    "| parser | start-up ms (fresh process, to first parse) | + over node -e 0 | parse median µs | parse p99 µs | accept/reject = bash -n | words = bash | redirect target = bash |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|");
  for (const c of candidates) {
    const s = startup(c.startup);
    const t = await timing(c, k);
    const [agree, words, redirs] = await fidelity(c, k);
    console.log(
      `| ${c.name} | ${fmt(s)} | ${fmt(s - base)} | ${fmt(t.medianUs)} | ${fmt(t.p99Us)} | ${agree} | ${words} | ${redirs} |`,
    );
  }
  if (candidates.length < 2)
    console.log("\nsh-syntax is not installed: `npm i --no-save sh-syntax` to measure it too.");
}

await main();
