import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  EvidenceEnvelope,
  type FileBinding,
  FileExecutor,
  type FileExecutorOptions,
  type FileOperation,
  rawOutputHash,
} from "../../src/executors/index.js";
import { MemoryJournal, mint } from "./helpers.js";

let base: string;
let root: string;
let outside: string;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), "warden-file-"));
  root = join(base, "root");
  outside = join(base, "outside");
  mkdirSync(join(root, "docs", "deep"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(root, "docs", "a.txt"), "hello");
  writeFileSync(join(root, "docs", "deep", "b.txt"), "deep");
  writeFileSync(join(outside, "secret.txt"), "TOP SECRET");
  mkdirSync(join(outside, "deep"));
  writeFileSync(join(outside, "deep", "b.txt"), "OUTSIDE");
});

afterEach(() => rmSync(base, { recursive: true, force: true }));

const binding: FileBinding = {
  name: "files",
  version: "1.0.0",
  build: (p) => p.op as unknown as FileOperation,
};

function run(op: FileOperation, options: Partial<FileExecutorOptions> = {}, journal?: MemoryJournal) {
  const ex = new FileExecutor({ root, maxReadBytes: 1024, ...options }, journal ? { journal } : {});
  return ex.execute(mint("files", { op }, { toolClass: "file", action: op.op }), binding);
}

async function code(op: FileOperation, options: Partial<FileExecutorOptions> = {}): Promise<string> {
  const r = await run(op, options);
  return r.ok ? "ok" : r.code;
}

describe("file executor: success", () => {
  it("reads a file and records evidence", async () => {
    const journal = new MemoryJournal();
    const r = await run({ op: "read", path: "docs/a.txt" }, {}, journal);
    if (!r.ok) throw new Error(r.code);
    expect(r.output).toEqual({ op: "read", content: Buffer.from("hello") });
    expect(EvidenceEnvelope.parse(r.evidence).output_hash).toBe(rawOutputHash(Buffer.from("hello")));
    expect(r.evidence.invocation).toMatchObject({
      kind: "file",
      op: "read",
      resolved: join(root, "docs", "a.txt"),
    });
    expect(r.taint.map((t) => t.source)).toEqual(["tool-output"]);
    expect(journal.ofType("warden.executor.evidence")).toHaveLength(1);
  });

  it("accepts an absolute path inside the root and follows symlinks that stay inside", async () => {
    symlinkSync(join(root, "docs", "a.txt"), join(root, "link.txt"));
    expect(await code({ op: "read", path: join(root, "docs", "a.txt") })).toBe("ok");
    const r = await run({ op: "read", path: "link.txt" });
    expect(r.ok && r.output.op === "read" && r.output.content.toString()).toBe("hello");
  });

  it("writes, lists and deletes", async () => {
    const w = await run({ op: "write", path: "docs/new.txt", content: "fresh", mode: "create" });
    expect(w.ok && w.output).toEqual({ op: "write", bytes: 5, created: true });
    expect(readFileSync(join(root, "docs", "new.txt"), "utf8")).toBe("fresh");
    const o = await run({ op: "write", path: "docs/new.txt", content: "v2", mode: "overwrite" });
    expect(o.ok).toBe(true);
    expect(readFileSync(join(root, "docs", "new.txt"), "utf8")).toBe("v2");
    const l = await run({ op: "list", path: "docs" });
    expect(l.ok && l.output).toEqual({
      op: "list",
      entries: [
        { name: "a.txt", type: "file" },
        { name: "deep", type: "directory" },
        { name: "new.txt", type: "file" },
      ],
    });
    const d = await run({ op: "delete", path: "docs/new.txt" });
    expect(d.ok).toBe(true);
    expect(existsSync(join(root, "docs", "new.txt"))).toBe(false);
  });

  it("reports create/overwrite conflicts and missing files", async () => {
    expect(await code({ op: "write", path: "docs/a.txt", content: "x", mode: "create" })).toBe(
      "ERR_EXEC_PATH_EXISTS",
    );
    expect(await code({ op: "write", path: "docs/zz.txt", content: "x", mode: "overwrite" })).toBe(
      "ERR_EXEC_PATH_NOT_FOUND",
    );
    expect(await code({ op: "read", path: "docs/none.txt" })).toBe("ERR_EXEC_PATH_NOT_FOUND");
    expect(await code({ op: "write", path: "nodir/x.txt", content: "x" })).toBe("ERR_EXEC_PATH_NOT_FOUND");
    expect(await code({ op: "delete", path: "docs/deep" })).toBe("ERR_EXEC_PATH_TYPE");
    expect(await code({ op: "read", path: "docs" })).toBe("ERR_EXEC_PATH_TYPE");
    expect(await code({ op: "list", path: "docs/a.txt" })).toBe("ERR_EXEC_PATH_TYPE");
  });

  it("caps reads, writes and listings", async () => {
    writeFileSync(join(root, "big.bin"), Buffer.alloc(2048));
    expect(await code({ op: "read", path: "big.bin" })).toBe("ERR_EXEC_OUTPUT_TOO_LARGE");
    expect(await code({ op: "write", path: "w.txt", content: "x".repeat(11) }, { maxWriteBytes: 10 })).toBe(
      "ERR_EXEC_INPUT_TOO_LARGE",
    );
    expect(existsSync(join(root, "w.txt"))).toBe(false);
    expect(await code({ op: "list", path: "docs" }, { maxListEntries: 1 })).toBe("ERR_EXEC_OUTPUT_TOO_LARGE");
  });

  it("rejects a bad root", () => {
    expect(() => new FileExecutor({ root: "relative" })).toThrowError(
      expect.objectContaining({ code: "ERR_EXEC_CONFIG_INVALID" }),
    );
    expect(() => new FileExecutor({ root: join(base, "missing") })).toThrowError(
      expect.objectContaining({ code: "ERR_EXEC_CONFIG_INVALID" }),
    );
  });
});

describe("file executor: attacks", () => {
  it.each([
    ["../outside/secret.txt"],
    ["docs/../../outside/secret.txt"],
    ["docs/../docs/a.txt"],
    ["./../outside/secret.txt"],
  ])("rejects traversal %s", async (path) => {
    expect(await code({ op: "read", path })).toBe("ERR_EXEC_PATH_TRAVERSAL");
  });

  it("rejects absolute paths outside the root", async () => {
    expect(await code({ op: "read", path: join(outside, "secret.txt") })).toBe("ERR_EXEC_PATH_OUTSIDE_ROOT");
    expect(await code({ op: "read", path: "/etc/passwd" })).toBe("ERR_EXEC_PATH_OUTSIDE_ROOT");
    expect(await code({ op: "write", path: `${root}-evil/x`, content: "x" })).toBe(
      "ERR_EXEC_PATH_OUTSIDE_ROOT",
    );
  });

  it("rejects a symlink that escapes the root", async () => {
    symlinkSync(join(outside, "secret.txt"), join(root, "escape.txt"));
    expect(await code({ op: "read", path: "escape.txt" })).toBe("ERR_EXEC_PATH_SYMLINK");
    expect(await code({ op: "write", path: "escape.txt", content: "pwn" })).toBe("ERR_EXEC_PATH_SYMLINK");
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("TOP SECRET");
  });

  it("rejects a write through a symlink even when it points inside the root", async () => {
    symlinkSync(join(root, "docs", "a.txt"), join(root, "inner-link"));
    expect(await code({ op: "write", path: "inner-link", content: "x" })).toBe("ERR_EXEC_PATH_SYMLINK");
  });

  it("rejects a symlinked parent directory for new files", async () => {
    symlinkSync(outside, join(root, "out"));
    expect(await code({ op: "write", path: "out/new.txt", content: "pwn", mode: "create" })).toBe(
      "ERR_EXEC_PATH_SYMLINK",
    );
    expect(existsSync(join(outside, "new.txt"))).toBe(false);
    expect(await code({ op: "list", path: "out" })).toBe("ERR_EXEC_PATH_SYMLINK");
    expect(await code({ op: "delete", path: "out/secret.txt" })).toBe("ERR_EXEC_PATH_SYMLINK");
    expect(existsSync(join(outside, "secret.txt"))).toBe(true);
  });

  it.each([
    ["zero-width space", "docs/a\u200b.txt"],
    ["right-to-left override", "docs/\u202etxt.a"],
    ["BOM", "\ufeffdocs/a.txt"],
    ["soft hyphen", "docs/a\u00ad.txt"],
    ["NUL", "docs/a.txt\u0000.png"],
    ["newline", "docs/a\n.txt"],
    ["no-break space", "docs/a\u00a0.txt"],
    ["tag character", "docs/a.txt\u{E0041}"],
    ["variation selector", "docs/a\ufe0f.txt"],
    ["combining grapheme joiner", "docs/a\u034f.txt"],
  ])("rejects invisible characters: %s", async (_label, path) => {
    const c = await code({ op: "read", path });
    expect(["ERR_EXEC_PATH_INVISIBLE", "ERR_EXEC_PATH_INVALID"]).toContain(c);
    expect(c).toBe(path.includes("\0") ? "ERR_EXEC_PATH_INVALID" : "ERR_EXEC_PATH_INVISIBLE");
  });

  it.each([
    ["fullwidth dots and slash", "\uff0e\uff0e\uff0foutside/secret.txt"],
    ["one-dot leader pair", "\u2024\u2024/outside/secret.txt"],
    ["fullwidth letters", "docs/\uff41.txt"],
    ["ligature", "docs/\ufb01le.txt"],
  ])("rejects NFKC look-alikes: %s", async (_label, path) => {
    expect(await code({ op: "read", path })).toBe("ERR_EXEC_PATH_LOOKALIKE");
  });

  it("rejects backslash paths", async () => {
    expect(await code({ op: "read", path: "..\\outside\\secret.txt" })).toBe("ERR_EXEC_PATH_INVALID");
  });

  it("TOCTOU: a parent directory swapped for a symlink after the check is refused (read)", async () => {
    const r = await run(
      { op: "read", path: "docs/deep/b.txt" },
      {
        afterCheck: () => {
          renameSync(join(root, "docs", "deep"), join(root, "docs", "deep-old"));
          symlinkSync(join(outside, "deep"), join(root, "docs", "deep"));
        },
      },
    );
    expect(!r.ok && r.code).toBe("ERR_EXEC_PATH_RACE");
    expect(JSON.stringify(r)).not.toContain("OUTSIDE");
  });

  it("TOCTOU: a grandparent swapped for a symlink is caught by re-reading the descriptor", async () => {
    // O_NOFOLLOW only guards the last component; /proc/self/fd shows where we really are.
    mkdirSync(join(outside, "docs2", "deep"), { recursive: true });
    writeFileSync(join(outside, "docs2", "deep", "b.txt"), "OUTSIDE");
    const r = await run(
      { op: "read", path: "docs/deep/b.txt" },
      {
        afterCheck: () => {
          renameSync(join(root, "docs"), join(root, "docs-old"));
          symlinkSync(join(outside, "docs2"), join(root, "docs"));
        },
      },
    );
    expect(!r.ok && r.code).toBe("ERR_EXEC_PATH_RACE");
    expect(JSON.stringify(r)).not.toContain("OUTSIDE");
  });

  it("TOCTOU: the file itself swapped for a symlink is refused by O_NOFOLLOW", async () => {
    const r = await run(
      { op: "read", path: "docs/a.txt" },
      {
        afterCheck: () => {
          rmSync(join(root, "docs", "a.txt"));
          symlinkSync(join(outside, "secret.txt"), join(root, "docs", "a.txt"));
        },
      },
    );
    expect(!r.ok && r.code).toBe("ERR_EXEC_PATH_RACE");
  });

  it("TOCTOU: a parent swapped before a create writes nothing outside", async () => {
    const r = await run(
      { op: "write", path: "docs/deep/new.txt", content: "pwn", mode: "create" },
      {
        afterCheck: () => {
          renameSync(join(root, "docs"), join(root, "docs-old"));
          symlinkSync(outside, join(root, "docs"));
        },
      },
    );
    expect(!r.ok && r.code).toBe("ERR_EXEC_PATH_RACE");
    expect(existsSync(join(outside, "deep", "new.txt"))).toBe(false);
  });

  it("TOCTOU: a delete target swapped for a symlink removes only the link", async () => {
    const r = await run(
      { op: "delete", path: "docs/a.txt" },
      {
        afterCheck: () => {
          rmSync(join(root, "docs", "a.txt"));
          symlinkSync(join(outside, "secret.txt"), join(root, "docs", "a.txt"));
        },
      },
    );
    expect(r.ok).toBe(true);
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("TOP SECRET");
  });
});
