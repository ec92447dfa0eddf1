// Attacks with files that are not regular files: a FIFO blocks open() until a peer
// shows up, a device never ends, a socket cannot be opened at all. The file
// executor refuses every one with ERR_EXEC_PATH_TYPE and never blocks on them.
// No test measures time: a hang shows up as the test's own timeout.
import { execFileSync } from "node:child_process";
import {
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type FileBinding,
  FileExecutor,
  type FileExecutorOptions,
  type FileOperation,
} from "../../src/executors/index.js";
import { mint } from "./helpers.js";

let base: string;
let root: string;
const fifos: string[] = [];
const servers: Server[] = [];

function mkfifo(path: string): string {
  execFileSync("mkfifo", [path]);
  fifos.push(path);
  return path;
}

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), "warden-file-special-"));
  root = join(base, "root");
  mkdirSync(join(root, "docs"), { recursive: true });
  writeFileSync(join(root, "docs", "a.txt"), "hello");
});

afterEach(async () => {
  // A writer stuck in open() (the bug) is released by a reader, so a failing run
  // does not leave a libuv thread blocked for the rest of the suite.
  for (const f of fifos.splice(0)) {
    try {
      closeSync(openSync(f, constants.O_RDONLY | constants.O_NONBLOCK));
    } catch {
      // already gone
    }
  }
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  rmSync(base, { recursive: true, force: true });
});

const binding: FileBinding = {
  name: "files",
  version: "1.0.0",
  build: (p) => p.op as unknown as FileOperation,
};

async function code(op: FileOperation, options: Partial<FileExecutorOptions> = {}): Promise<string> {
  const ex = new FileExecutor({ root, ...options });
  const r = await ex.execute(mint("files", { op }, { toolClass: "file", action: op.op }), binding);
  return r.ok ? "ok" : r.code;
}

async function listenUnix(path: string): Promise<void> {
  const s = createServer();
  servers.push(s);
  await new Promise<void>((resolve) => s.listen(path, resolve));
}

describe("file executor: non-regular files are refused, never waited on", () => {
  it("an agent that reads a FIFO in the sandbox gets ERR_EXEC_PATH_TYPE", async () => {
    mkfifo(join(root, "docs", "pipe"));
    expect(await code({ op: "read", path: "docs/pipe" })).toBe("ERR_EXEC_PATH_TYPE");
  });

  it.each([["upsert" as const], ["overwrite" as const]])(
    "an agent that writes (%s) to a FIFO with no reader is refused instead of hanging",
    async (mode) => {
      mkfifo(join(root, "docs", "pipe"));
      expect(await code({ op: "write", path: "docs/pipe", content: "x", mode })).toBe("ERR_EXEC_PATH_TYPE");
    },
  );

  it("an agent that writes to a FIFO someone is reading sends it nothing", async () => {
    const pipe = mkfifo(join(root, "docs", "pipe"));
    const reader = openSync(pipe, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      expect(await code({ op: "write", path: "docs/pipe", content: "LEAKED" })).toBe("ERR_EXEC_PATH_TYPE");
      const buf = Buffer.alloc(16);
      let n = 0;
      try {
        n = readSync(reader, buf, 0, buf.length, null);
      } catch (err) {
        expect((err as NodeJS.ErrnoException).code).toBe("EAGAIN");
      }
      expect(buf.subarray(0, n).toString()).toBe("");
    } finally {
      closeSync(reader);
    }
  });

  it("an agent that deletes a FIFO is refused (the executor manages regular files only)", async () => {
    const pipe = mkfifo(join(root, "docs", "pipe"));
    expect(await code({ op: "delete", path: "docs/pipe" })).toBe("ERR_EXEC_PATH_TYPE");
    expect(existsSync(pipe)).toBe(true);
  });

  it("a regular file swapped for a FIFO after the check is refused without blocking (read)", async () => {
    const r = await code(
      { op: "read", path: "docs/a.txt" },
      {
        afterCheck: () => {
          renameSync(join(root, "docs", "a.txt"), join(root, "docs", "a.old"));
          mkfifo(join(root, "docs", "a.txt"));
        },
      },
    );
    expect(r).toBe("ERR_EXEC_PATH_TYPE");
  });

  it("a regular file swapped for a FIFO after the check is refused without blocking (overwrite)", async () => {
    const r = await code(
      { op: "write", path: "docs/a.txt", content: "x", mode: "overwrite" },
      {
        afterCheck: () => {
          renameSync(join(root, "docs", "a.txt"), join(root, "docs", "a.old"));
          mkfifo(join(root, "docs", "a.txt"));
        },
      },
    );
    expect(r).toBe("ERR_EXEC_PATH_TYPE");
    expect(readFileSync(join(root, "docs", "a.old"), "utf8")).toBe("hello");
  });

  it("an agent that lists a FIFO as if it were a directory gets ERR_EXEC_PATH_TYPE", async () => {
    mkfifo(join(root, "docs", "pipe"));
    expect(await code({ op: "list", path: "docs/pipe" })).toBe("ERR_EXEC_PATH_TYPE");
    expect(await code({ op: "write", path: "docs/pipe", content: "x", mode: "create" })).toBe(
      "ERR_EXEC_PATH_TYPE",
    );
  });

  it("a listing shows a FIFO as 'other' without opening it", async () => {
    mkfifo(join(root, "docs", "pipe"));
    const ex = new FileExecutor({ root });
    const op: FileOperation = { op: "list", path: "docs" };
    const r = await ex.execute(mint("files", { op }, { toolClass: "file", action: "list" }), binding);
    expect(r.ok && r.output).toEqual({
      op: "list",
      entries: [
        { name: "a.txt", type: "file" },
        { name: "pipe", type: "other" },
      ],
    });
  });

  it("an agent that reads or writes a Unix socket file gets ERR_EXEC_PATH_TYPE", async () => {
    await listenUnix(join(root, "docs", "sock"));
    expect(await code({ op: "read", path: "docs/sock" })).toBe("ERR_EXEC_PATH_TYPE");
    expect(await code({ op: "write", path: "docs/sock", content: "x" })).toBe("ERR_EXEC_PATH_TYPE");
    expect(await code({ op: "delete", path: "docs/sock" })).toBe("ERR_EXEC_PATH_TYPE");
    expect(existsSync(join(root, "docs", "sock"))).toBe(true);
  });

  it("an agent that reads /dev/zero through a symlink in the sandbox is refused", async () => {
    execFileSync("ln", ["-s", "/dev/zero", join(root, "zero")]);
    expect(await code({ op: "read", path: "zero" })).toBe("ERR_EXEC_PATH_SYMLINK");
  });

  it("device files reached without a symlink (a root that contains /dev) are refused", async () => {
    // Stands in for a bind mount of /dev into the sandbox: the devices sit inside the root.
    expect(await code({ op: "read", path: "zero" }, { root: "/dev" })).toBe("ERR_EXEC_PATH_TYPE");
    expect(await code({ op: "read", path: "urandom" }, { root: "/dev" })).toBe("ERR_EXEC_PATH_TYPE");
    expect(await code({ op: "write", path: "null", content: "x" }, { root: "/dev" })).toBe(
      "ERR_EXEC_PATH_TYPE",
    );
    expect(await code({ op: "write", path: "null", content: "x", mode: "overwrite" }, { root: "/dev" })).toBe(
      "ERR_EXEC_PATH_TYPE",
    );
  });
});
