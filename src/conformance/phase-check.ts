// OATS C1 (§11.4: "attempt to construct a code path from Reason to Act that bypasses Gate;
// in a typestate implementation this MUST be a compile error"). The scenario writes such
// code paths against the loop's own published types and runs the TypeScript compiler on
// them: each illegal line must be a compile error, and a legal control path must compile
// (so a broken compiler set-up cannot pass as enforcement). Needs the TypeScript compiler
// (a dev dependency); without it the check reports that it could not run.
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Observation } from "./types.js";

/** The illegal transitions: each line must fail to compile. */
export const ILLEGAL_PATHS: readonly { what: string; code: string }[] = [
  { what: "Reason → Act (skipping the Gate)", code: "await reasoning.act();" },
  { what: "the Reason result dispatching before gate()", code: "await (await reasoning.reason()).act();" },
  { what: "PolicyCheck → Observe (no dispatch)", code: "await checking.observe();" },
  { what: "a PolicyCheck standing in for a Dispatching", code: "const d: Dispatching = checking; void d;" },
  {
    what: "fabricating a Dispatching outside the loop",
    code: 'new Dispatching(Symbol("forged"), {} as never);',
  },
];

function source(loopModule: string, legal: boolean): string {
  const head = `import { type AgentLoop, Dispatching } from ${JSON.stringify(loopModule)};\n`;
  const sig = `(reasoning: AgentLoop<"reasoning">, checking: AgentLoop<"policy_check">): Promise<void> {\n`;
  if (legal)
    return `${head}export async function legal${sig}  void checking; void Dispatching;\n  await (await (await (await reasoning.reason()).gate()).act()).observe();\n}\n`;
  return (
    head +
    ILLEGAL_PATHS.map(
      (p, i) => `export async function illegal${i}${sig}  void reasoning; void checking;\n  ${p.code}\n}\n`,
    ).join("")
  );
}

/** The loop's public face next to this module (src/loop/index.ts, or dist's index.d.ts). */
export function defaultLoopModule(): string {
  return join(dirname(fileURLToPath(import.meta.url)), "..", "loop", "index.js");
}

function tscPath(): { bin: string; typeRoots: string } | undefined {
  try {
    const pkg = createRequire(import.meta.url).resolve("typescript/package.json");
    const bin = join(dirname(pkg), "bin", "tsc");
    return existsSync(bin) ? { bin, typeRoots: join(dirname(pkg), "..", "@types") } : undefined;
  } catch {
    return undefined;
  }
}

function run(bin: string, project: string): Promise<string> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, "-p", project, "--pretty", "false"],
      { timeout: 120_000 },
      (_e, out, err) => resolve(`${out}${err}`),
    );
  });
}

/** Compiles the illegal paths and the legal control against `loopModule`. */
export async function phaseOrderCompiles(
  loopModule = defaultLoopModule(),
): Promise<Observation & { ran: boolean }> {
  const tsc = tscPath();
  if (tsc === undefined)
    return {
      ran: false,
      pass: false,
      observed:
        "the TypeScript compiler is not installed (an optional peer of Warden: npm install typescript beside it)",
    };
  const dir = mkdtempSync(join(tmpdir(), "warden-conformance-c1-"));
  try {
    writeFileSync(join(dir, "illegal.ts"), source(loopModule, false));
    writeFileSync(join(dir, "legal.ts"), source(loopModule, true));
    const compilerOptions = {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      module: "NodeNext",
      moduleResolution: "NodeNext",
      target: "ES2022",
      lib: ["ES2023"],
      types: ["node"],
      typeRoots: [tsc.typeRoots],
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
    };
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({ compilerOptions, files: ["illegal.ts", "legal.ts"] }),
    );
    const out = await run(tsc.bin, join(dir, "tsconfig.json"));
    const errorsIn = (file: string) =>
      out
        .split("\n")
        .filter((l) => (l.startsWith(`${file}(`) || l.includes(`/${file}(`)) && l.includes("error"));
    const legalErrors = errorsIn("legal.ts");
    const illegalLines = new Set(errorsIn("illegal.ts").map((l) => Number(/\((\d+),/.exec(l)?.[1])));
    // Function i's illegal line is 4 + 4i (one import line, then 4 lines per function).
    const compiled = ILLEGAL_PATHS.filter((_, i) => !illegalLines.has(4 + 4 * i)).map((p) => p.what);
    const pass = legalErrors.length === 0 && compiled.length === 0;
    const observed =
      legalErrors.length > 0
        ? `the legal control path does not compile: ${legalErrors[0]?.slice(0, 160)}`
        : compiled.length > 0
          ? `compiles (must not): ${compiled.join("; ")}`
          : `${ILLEGAL_PATHS.length} illegal transitions are compile errors; the legal Reason → Gate → Act → Observe path compiles`;
    return { ran: true, pass, observed };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
