import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  EvidenceEnvelope,
  type ProcessBinding,
  ProcessExecutor,
  type ProcessExecutorOptions,
  type ProcessSpec,
  rawOutputHash,
} from "../../src/executors/index.js";
import { MemoryJournal, mint } from "./helpers.js";

let base: string;
let work: string;
let trusted: string;

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), "warden-proc-"));
  work = join(base, "work");
  trusted = join(base, "trusted");
  mkdirSync(join(work, "sub"), { recursive: true });
  mkdirSync(trusted);
  mkdirSync(join(base, "untrusted"));
  const script = (p: string, body: string) => {
    writeFileSync(p, `#!/bin/sh\n${body}\n`);
    chmodSync(p, 0o755);
  };
  script(join(trusted, "hello"), "echo trusted-hello");
  script(join(base, "untrusted", "evil"), "echo evil");
  symlinkSync(join(base, "untrusted", "evil"), join(trusted, "sneaky"));
  symlinkSync(join(base, "untrusted"), join(work, "escape"));
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

/** The contract's template: argv with {arg} placeholders filled from the ticket's parameters. */
function binding(template: ProcessSpec): ProcessBinding {
  return {
    name: "tool",
    version: "1.0.0",
    build: (p) => ({
      ...template,
      argv: template.argv.map((a) => a.replace(/\{(\w+)\}/g, (_m, k: string) => String(p[k] ?? ""))),
    }),
  };
}

function run(
  template: ProcessSpec,
  params: Record<string, unknown> = {},
  options: Partial<ProcessExecutorOptions> = {},
  extra: { journal?: MemoryJournal; timeoutMs?: number; signal?: AbortSignal } = {},
) {
  const ex = new ProcessExecutor(
    { workDir: work, ...options },
    extra.journal ? { journal: extra.journal } : {},
  );
  return ex.execute(mint("tool", params, { toolClass: "shell", action: "run" }), binding(template), {
    ...(extra.timeoutMs !== undefined ? { timeoutMs: extra.timeoutMs } : {}),
    ...(extra.signal !== undefined ? { signal: extra.signal } : {}),
  });
}

describe("process executor: success", () => {
  it("runs a contract argv with the binary resolved under a trusted prefix", async () => {
    const journal = new MemoryJournal();
    const r = await run({ argv: ["echo", "{msg}"] }, { msg: "hi there" }, {}, { journal });
    if (!r.ok) throw new Error(r.code);
    expect(r.output.stdout.toString()).toBe("hi there\n");
    expect(r.output.exitCode).toBe(0);
    const ev = EvidenceEnvelope.parse(r.evidence);
    expect(ev.output_hash).toBe(rawOutputHash(Buffer.from("hi there\n")));
    expect(ev.exit).toEqual({ code: 0, signal: null, http_status: null });
    expect(ev.invocation).toMatchObject({ kind: "process", argv: ["echo", "hi there"], cwd: work });
    expect(ev.invocation?.kind === "process" && ev.invocation.binary.startsWith("/")).toBe(true);
    expect(journal.ofType("dare.tool.response")).toHaveLength(1);
  });

  it("records a non-zero exit as a tool failure with its output", async () => {
    const r = await run({ argv: ["sh", "-c", "echo out; exit 3"] });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.code).toBe("ERR_EXEC_TOOL_FAILED");
    expect(r.evidence?.exit.code).toBe(3);
    expect(r.output?.stdout.toString()).toBe("out\n");
  });

  it("runs in a confined subdirectory and accepts custom trusted prefixes", async () => {
    const r = await run({ argv: ["pwd"], cwd: "sub" });
    expect(r.ok && r.output.stdout.toString().trim()).toBe(join(work, "sub"));
    const t = await run({ argv: ["hello"] }, {}, { trustedPrefixes: [trusted, "/usr/bin", "/bin"] });
    expect(t.ok && t.output.stdout.toString()).toBe("trusted-hello\n");
  });
});

describe("process executor: attacks", () => {
  it("treats shell metacharacters in arguments as literal bytes", async () => {
    const marker = join(base, "pwned");
    const payload = `x; touch ${marker} && $(touch ${marker}) \`touch ${marker}\` | cat > ${marker} || true`;
    const r = await run({ argv: ["echo", "{msg}"] }, { msg: payload });
    if (!r.ok) throw new Error(r.code);
    expect(r.output.stdout.toString()).toBe(`${payload}\n`);
    expect(existsSync(marker)).toBe(false);
  });

  it("cannot be turned into a shell by a parameter in argv[0]", async () => {
    const r = await run({ argv: ["{bin}", "-c", "id"] }, { bin: "sh -c id" });
    expect(!r.ok && r.code).toBe("ERR_EXEC_BINARY_NOT_FOUND");
  });

  it.each([
    ["a relative path", "./evil", "ERR_EXEC_BINARY_UNTRUSTED"],
    ["a relative path with a directory", "untrusted/evil", "ERR_EXEC_BINARY_UNTRUSTED"],
    ["an absolute path outside the prefixes", "{untrusted}", "ERR_EXEC_BINARY_UNTRUSTED"],
    ["a traversal out of a prefix", "/usr/bin/../../{rel}", "ERR_EXEC_BINARY_UNTRUSTED"],
    ["a symlink in a trusted prefix leading outside", "sneaky", "ERR_EXEC_BINARY_UNTRUSTED"],
    ["an unknown name", "no-such-binary-xyz", "ERR_EXEC_BINARY_NOT_FOUND"],
  ])("refuses %s as the binary", async (_label, bin, code) => {
    const evil = join(base, "untrusted", "evil");
    const r = await run(
      { argv: [bin.replace("{untrusted}", evil).replace("{rel}", evil.slice(1))] },
      {},
      { trustedPrefixes: [trusted, "/usr/bin", "/bin"] },
    );
    expect(!r.ok && r.code).toBe(code);
  });

  it("does not leak secrets through the environment", async () => {
    const env = {
      HOME: "/home/agent",
      MY_VAR: "visible",
      AWS_SECRET_ACCESS_KEY: "aws-secret-value",
      GITHUB_TOKEN: "ghp_secret",
      DB_PASSWORD: "hunter2",
      UNLISTED: "not-asked-for",
      PATH: "/tmp/evil:/usr/bin",
    };
    const r = await run(
      {
        argv: ["env"],
        env: ["HOME", "MY_VAR", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "PATH"],
      },
      {},
      { env },
    );
    if (!r.ok) throw new Error(r.code);
    const lines = r.output.stdout.toString().trim().split("\n").sort();
    expect(lines).toEqual(["HOME=/home/agent", "MY_VAR=visible", "PATH=/usr/bin:/bin:/usr/local/bin"]);
    expect(JSON.stringify(r.evidence)).not.toMatch(/aws-secret-value|ghp_secret|hunter2/);
    const allowed = await run(
      { argv: ["env"], env: ["GITHUB_TOKEN"] },
      {},
      { env, allowSecretEnv: ["GITHUB_TOKEN"] },
    );
    // The process received it (the value was there to mask); the agent never sees it.
    expect(allowed.ok && allowed.output.stdout.toString()).toContain("GITHUB_TOKEN=***");
    expect(JSON.stringify(allowed)).not.toContain("ghp_secret");
  });

  it("a tool that prints an allowed secret (stdout, stderr, base64) hands back only the masked form", async () => {
    const journal = new MemoryJournal();
    const token = "ghp_Abcdef0123456789";
    const r = await run(
      {
        argv: [
          "sh",
          "-c",
          'echo "t=$GITHUB_TOKEN"; echo "$GITHUB_TOKEN" >&2; printf %s "$GITHUB_TOKEN" | base64',
        ],
        env: ["GITHUB_TOKEN"],
      },
      {},
      { env: { GITHUB_TOKEN: token }, allowSecretEnv: ["GITHUB_TOKEN"] },
      { journal },
    );
    if (!r.ok) throw new Error(`${r.code} ${r.message}`);
    // base64: the characters that hold only secret bits are masked; an edge character
    // mixing secret bits with padding may stay (under one byte of information).
    expect(r.output.stdout.toString()).toMatch(/^t=\*\*\*\n\*\*\*[A-Za-z0-9+/]{0,2}=*\n$/);
    expect(r.output.stderr.toString()).toBe("***\n");
    expect(r.evidence.output_hash).toBe(rawOutputHash(r.output.stdout));
    expect(r.evidence.output_masked).toBe(3);
    for (const leak of [token, Buffer.from(token).toString("base64")]) {
      expect(JSON.stringify(r)).not.toContain(leak);
      expect(JSON.stringify(journal.events)).not.toContain(leak);
    }
  });

  it.each([
    ["..", "ERR_EXEC_CWD_OUTSIDE"],
    ["sub/../..", "ERR_EXEC_CWD_OUTSIDE"],
    ["/etc", "ERR_EXEC_CWD_OUTSIDE"],
    ["escape", "ERR_EXEC_CWD_OUTSIDE"],
    ["missing", "ERR_EXEC_CWD_OUTSIDE"],
  ])("confines the working directory (%s)", async (cwd, code) => {
    const r = await run({ argv: ["pwd"], cwd });
    expect(!r.ok && r.code).toBe(code);
  });

  it("caps stdout and kills the process", async () => {
    const r = await run({ argv: ["head", "-c", "100000", "/dev/zero"] }, {}, { maxStdoutBytes: 1000 });
    expect(!r.ok && r.code).toBe("ERR_EXEC_OUTPUT_TOO_LARGE");
  });

  it("kills the whole process group on timeout", async () => {
    const r = await run({ argv: ["sh", "-c", "sleep 30 & echo $!; wait"] }, {}, {}, { timeoutMs: 400 });
    expect(!r.ok && r.code).toBe("ERR_EXEC_TIMEOUT");
    const pid = Number((r.ok ? undefined : r.output)?.stdout.toString().trim());
    expect(pid).toBeGreaterThan(0);
    await new Promise((res) => setTimeout(res, 100));
    // Gone, or a zombie waiting for a reaper: either way no longer running.
    const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, "utf8") : "";
    expect(stat === "" || / Z /.test(stat)).toBe(true);
  });

  it("can be cancelled", async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 150);
    const r = await run({ argv: ["sleep", "30"] }, {}, {}, { signal: ac.signal });
    expect(!r.ok && r.code).toBe("ERR_EXEC_CANCELLED");
    expect(!r.ok && r.evidence?.exit.signal).toBe("SIGKILL");
  });

  it("rejects a bad configuration", () => {
    expect(() => new ProcessExecutor({ workDir: "rel" })).toThrowError(
      expect.objectContaining({ code: "ERR_EXEC_CONFIG_INVALID" }),
    );
    expect(() => new ProcessExecutor({ workDir: work, trustedPrefixes: ["bin"] })).toThrowError(
      expect.objectContaining({ code: "ERR_EXEC_CONFIG_INVALID" }),
    );
  });
});
