// The file executor: one root directory per deployment, and nothing outside it.
// Paths are checked as text first (no traversal, no invisible or look-alike
// characters), then resolved with realpath and confined to the root. Checking
// is not enough on its own (a path component can be swapped for a symlink
// between check and use), so every operation goes through a parent directory
// descriptor opened with O_NOFOLLOW whose real location is re-read from
// /proc/self/fd, and the final component is opened relative to that descriptor,
// again with O_NOFOLLOW. Linux only, by design.
import { constants, existsSync, realpathSync, statSync } from "node:fs";
import { type FileHandle, lstat, open, readdir, readlink, realpath, unlink } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, sep } from "node:path";
import { ExecutorError } from "../contracts/index.js";
import type { Invocation } from "./evidence.js";
import {
  type AttemptOutcome,
  abortCode,
  type CallOptions,
  type ExecutionResult,
  type ExecutorDeps,
  type ExecutorErrorCode,
  runBound,
  type ToolIdentity,
} from "./runtime.js";

export type FileOperation =
  | { op: "read"; path: string }
  | {
      op: "write";
      path: string;
      content: string | Uint8Array;
      /** create: must not exist; overwrite: must exist; upsert: either (default). */
      mode?: "create" | "overwrite" | "upsert";
    }
  | { op: "list"; path: string }
  | { op: "delete"; path: string };

export type FileOutput =
  | { op: "read"; content: Buffer }
  | { op: "write"; bytes: number; created: boolean }
  | { op: "list"; entries: { name: string; type: "file" | "directory" | "symlink" | "other" }[] }
  | { op: "delete" };

export interface FileBinding extends ToolIdentity {
  build(parameters: Readonly<Record<string, unknown>>): FileOperation;
}

export interface FileExecutorOptions {
  /** The deployment's root directory; every path is confined to its real path. */
  root: string;
  maxReadBytes?: number;
  maxWriteBytes?: number;
  maxListEntries?: number;
  maxTimeoutMs?: number;
  /**
   * @internal Test hook run after the path checks and before the descriptor is
   * opened: the window a TOCTOU attacker would use.
   */
  afterCheck?: (resolved: string) => void | Promise<void>;
}

const INVISIBLE =
  /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\u00A0\u115F\u1160\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000\u3164\uFFA0]/u;
/** Combining marks that render as nothing (grapheme joiner, Khmer vowels, Mongolian and variation selectors). */
const INVISIBLE_MARKS = /\u034F|\u17B4|\u17B5|\u180B|\u180C|\u180D|\u180E|\u180F|\p{Variation_Selector}/u;

/**
 * Flags on every open of a final component. O_NONBLOCK makes opening a FIFO return
 * at once (a writer with no reader gets ENXIO) instead of blocking a libuv thread past
 * any deadline; the descriptor is then fstat-ed and anything but a regular file refused,
 * so a file swapped for a FIFO or device between check and open is caught too.
 */
const NO_WAIT = constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

class PathError extends Error {
  constructor(
    readonly code: ExecutorErrorCode,
    message: string,
  ) {
    super(message);
  }
}

function deny(code: ExecutorErrorCode, message: string): never {
  throw new PathError(code, message);
}

function within(root: string, p: string): boolean {
  return p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** Text-level checks; returns the path's segments relative to the root. */
export function checkPathText(path: string, root: string, rootReal: string): string[] {
  if (typeof path !== "string" || path.length === 0 || path.length > 4096) {
    deny("ERR_EXEC_PATH_INVALID", "path must be a non-empty string of at most 4096 characters");
  }
  if (path.includes("\0")) deny("ERR_EXEC_PATH_INVALID", "path contains NUL");
  if (INVISIBLE.test(path) || INVISIBLE_MARKS.test(path))
    deny("ERR_EXEC_PATH_INVISIBLE", "path contains invisible or control characters");
  if (path.normalize("NFKC") !== path) {
    deny("ERR_EXEC_PATH_LOOKALIKE", "path is not in NFKC form (compatibility look-alike characters)");
  }
  if (path.includes("\\")) deny("ERR_EXEC_PATH_INVALID", "backslashes are not allowed in paths");
  let rel = path;
  if (isAbsolute(path)) {
    const base = [rootReal, root].find((r) => within(r, path));
    if (base === undefined) deny("ERR_EXEC_PATH_OUTSIDE_ROOT", "absolute path outside the root");
    rel = path.slice(base.length);
  }
  const segments = rel.split("/").filter((s) => s !== "" && s !== ".");
  if (segments.includes("..")) deny("ERR_EXEC_PATH_TRAVERSAL", "path traversal ('..') is not allowed");
  return segments;
}

function fsCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException)?.code;
}

export class FileExecutor {
  readonly #root: string;
  readonly #rootReal: string;
  readonly #maxRead: number;
  readonly #maxWrite: number;
  readonly #maxList: number;
  readonly #maxTimeoutMs: number;
  readonly #afterCheck: FileExecutorOptions["afterCheck"];
  readonly #deps: ExecutorDeps;

  constructor(options: FileExecutorOptions, deps: ExecutorDeps = {}) {
    if (!existsSync("/proc/self/fd")) {
      throw new ExecutorError("ERR_EXEC_CONFIG_INVALID", "the file executor needs /proc/self/fd (Linux)");
    }
    if (!isAbsolute(options.root))
      throw new ExecutorError("ERR_EXEC_CONFIG_INVALID", "root must be absolute");
    let real: string;
    try {
      real = realpathSync(options.root);
    } catch {
      throw new ExecutorError("ERR_EXEC_CONFIG_INVALID", "root does not exist");
    }
    if (!statSync(real).isDirectory())
      throw new ExecutorError("ERR_EXEC_CONFIG_INVALID", "root is not a directory");
    this.#root = options.root;
    this.#rootReal = real;
    this.#maxRead = options.maxReadBytes ?? 10 * 1024 * 1024;
    this.#maxWrite = options.maxWriteBytes ?? 10 * 1024 * 1024;
    this.#maxList = options.maxListEntries ?? 10_000;
    this.#maxTimeoutMs = options.maxTimeoutMs ?? 30_000;
    this.#afterCheck = options.afterCheck;
    this.#deps = deps;
  }

  get root(): string {
    return this.#rootReal;
  }

  execute(
    ticket: unknown,
    binding: FileBinding,
    opts: CallOptions = {},
  ): Promise<ExecutionResult<FileOutput>> {
    return runBound(
      ticket,
      {
        executor: "file",
        binding,
        defaultTaint: "tool-output",
        maxTimeoutMs: this.#maxTimeoutMs,
        attempt: async (op, { signal }) => {
          const inv: Invocation & { kind: "file" } = {
            kind: "file",
            op: op.op,
            path: op.path,
            resolved: null,
            ...(op.op === "write" ? { bytes_in: Buffer.byteLength(op.content) } : {}),
          };
          try {
            return await this.#perform(op, inv, signal);
          } catch (err) {
            if (err instanceof PathError)
              return { invocation: inv, error: { code: err.code, message: err.message } };
            return { invocation: inv, error: { code: "ERR_EXEC_IO", message: fsCode(err) ?? "I/O error" } };
          }
        },
      },
      this.#deps,
      opts,
    );
  }

  /** Opens a directory by its checked real path and proves the descriptor is that directory. */
  async #openDir(realDir: string): Promise<FileHandle> {
    let dir: FileHandle;
    try {
      dir = await open(realDir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    } catch (err) {
      const c = fsCode(err);
      if (c === "ELOOP" || c === "ENOTDIR")
        deny("ERR_EXEC_PATH_RACE", "a path component changed after it was checked");
      if (c === "ENOENT") deny("ERR_EXEC_PATH_NOT_FOUND", "directory not found");
      throw err;
    }
    const actual = await readlink(`/proc/self/fd/${dir.fd}`).catch(() => "");
    if (actual !== realDir || !within(this.#rootReal, actual)) {
      await dir.close();
      deny("ERR_EXEC_PATH_RACE", "the opened directory is not the one that was checked");
    }
    return dir;
  }

  async #perform(
    op: FileOperation,
    inv: Invocation & { kind: "file" },
    signal: AbortSignal,
  ): Promise<AttemptOutcome<FileOutput>> {
    const segments = checkPathText(op.path, this.#root, this.#rootReal);
    const target = join(this.#rootReal, ...segments);
    if (op.op === "write" && Buffer.byteLength(op.content) > this.#maxWrite) {
      deny("ERR_EXEC_INPUT_TOO_LARGE", `write over ${this.#maxWrite} bytes`);
    }
    const aborted = (): AttemptOutcome<FileOutput> | undefined =>
      signal.aborted
        ? { invocation: inv, error: { code: abortCode(signal), message: "aborted" } }
        : undefined;

    if (op.op === "read" || op.op === "list") {
      let real: string;
      try {
        real = await realpath(target);
      } catch (err) {
        if (fsCode(err) === "ENOENT") deny("ERR_EXEC_PATH_NOT_FOUND", "no such file or directory");
        throw err;
      }
      if (!within(this.#rootReal, real)) deny("ERR_EXEC_PATH_SYMLINK", "path resolves outside the root");
      inv.resolved = real;
      // Refuse FIFOs, devices and sockets before opening them at all; #read re-checks the descriptor.
      if (op.op === "read" && real !== this.#rootReal && !(await lstat(real)).isFile()) {
        deny("ERR_EXEC_PATH_TYPE", "not a regular file");
      }
      await this.#afterCheck?.(real);
      const stop = aborted();
      if (stop) return stop;
      if (op.op === "list") return this.#list(real, inv);
      if (real === this.#rootReal) deny("ERR_EXEC_PATH_TYPE", "the root is a directory");
      return this.#read(real, inv);
    }

    if (segments.length === 0) deny("ERR_EXEC_PATH_TYPE", "cannot write or delete the root");
    let parentReal: string;
    try {
      parentReal = await realpath(dirname(target));
    } catch (err) {
      if (fsCode(err) === "ENOENT") deny("ERR_EXEC_PATH_NOT_FOUND", "parent directory not found");
      throw err;
    }
    if (!within(this.#rootReal, parentReal)) {
      deny("ERR_EXEC_PATH_SYMLINK", "the parent directory resolves outside the root");
    }
    const name = basename(target);
    const resolved = join(parentReal, name);
    inv.resolved = resolved;
    const existing = await lstat(resolved).catch(() => undefined);
    if (op.op === "write" && existing?.isSymbolicLink())
      deny("ERR_EXEC_PATH_SYMLINK", "refusing to write through a symlink");
    if (existing !== undefined && !existing.isFile() && !existing.isSymbolicLink()) {
      deny("ERR_EXEC_PATH_TYPE", "not a regular file");
    }
    await this.#afterCheck?.(resolved);
    const stop = aborted();
    if (stop) return stop;
    const dir = await this.#openDir(parentReal);
    try {
      const viaFd = `/proc/self/fd/${dir.fd}/${name}`;
      if (op.op === "delete") {
        const st = await lstat(viaFd).catch((err) => {
          if (fsCode(err) === "ENOENT") deny("ERR_EXEC_PATH_NOT_FOUND", "no such file");
          throw err;
        });
        // Only regular files, or a symlink itself (never what it points to).
        if (!st.isFile() && !st.isSymbolicLink()) deny("ERR_EXEC_PATH_TYPE", "not a regular file");
        await unlink(viaFd);
        return { invocation: inv, raw: new Uint8Array(0), output: { op: "delete" } };
      }
      return await this.#write(op, viaFd, resolved, existing !== undefined, inv);
    } finally {
      await dir.close();
    }
  }

  async #read(real: string, inv: Invocation & { kind: "file" }): Promise<AttemptOutcome<FileOutput>> {
    const dir = await this.#openDir(dirname(real));
    let fh: FileHandle;
    try {
      fh = await open(`/proc/self/fd/${dir.fd}/${basename(real)}`, NO_WAIT | constants.O_RDONLY).catch(
        (err) => {
          const c = fsCode(err);
          if (c === "ELOOP") deny("ERR_EXEC_PATH_RACE", "the file became a symlink after it was checked");
          if (c === "ENXIO") deny("ERR_EXEC_PATH_TYPE", "not a regular file (a socket)");
          if (c === "ENOENT") deny("ERR_EXEC_PATH_NOT_FOUND", "no such file");
          throw err;
        },
      );
    } finally {
      await dir.close();
    }
    try {
      const st = await fh.stat();
      if (!st.isFile()) deny("ERR_EXEC_PATH_TYPE", "not a regular file");
      if (st.size > this.#maxRead) deny("ERR_EXEC_OUTPUT_TOO_LARGE", `file over ${this.#maxRead} bytes`);
      const buf = Buffer.alloc(Math.min(this.#maxRead + 1, st.size + 1));
      let n = 0;
      for (;;) {
        const { bytesRead } = await fh.read(buf, n, buf.length - n, n);
        if (bytesRead === 0) break;
        n += bytesRead;
        if (n >= buf.length) break;
      }
      if (n > this.#maxRead) deny("ERR_EXEC_OUTPUT_TOO_LARGE", `file over ${this.#maxRead} bytes`);
      const content = buf.subarray(0, n);
      return { invocation: inv, raw: content, output: { op: "read", content } };
    } finally {
      await fh.close();
    }
  }

  async #write(
    op: FileOperation & { op: "write" },
    viaFd: string,
    resolved: string,
    existed: boolean,
    inv: Invocation & { kind: "file" },
  ): Promise<AttemptOutcome<FileOutput>> {
    const mode = op.mode ?? "upsert";
    const flags =
      NO_WAIT |
      constants.O_WRONLY |
      (mode === "create" ? constants.O_CREAT | constants.O_EXCL : mode === "upsert" ? constants.O_CREAT : 0);
    const fh = await open(viaFd, flags, 0o600).catch((err) => {
      const c = fsCode(err);
      if (c === "ELOOP") deny("ERR_EXEC_PATH_RACE", "the file became a symlink after it was checked");
      if (c === "EEXIST") deny("ERR_EXEC_PATH_EXISTS", "file already exists");
      if (c === "ENOENT") deny("ERR_EXEC_PATH_NOT_FOUND", "no such file");
      if (c === "EISDIR") deny("ERR_EXEC_PATH_TYPE", "is a directory");
      // A FIFO with no reader or a socket: O_NONBLOCK turns the wait into ENXIO.
      if (c === "ENXIO") deny("ERR_EXEC_PATH_TYPE", "not a regular file");
      throw err;
    });
    try {
      const actual = await readlink(`/proc/self/fd/${fh.fd}`).catch(() => "");
      const st = await fh.stat();
      if (actual !== resolved || !st.isFile()) {
        deny(
          st.isFile() ? "ERR_EXEC_PATH_RACE" : "ERR_EXEC_PATH_TYPE",
          "the opened file is not the one checked",
        );
      }
      const data = typeof op.content === "string" ? Buffer.from(op.content) : Buffer.from(op.content);
      await fh.truncate(0);
      await fh.write(data, 0, data.length, 0);
      return {
        invocation: inv,
        raw: new Uint8Array(0),
        output: { op: "write", bytes: data.length, created: !existed },
        usage: { fsBytesWritten: data.length, fsFilesWritten: 1 },
      };
    } finally {
      await fh.close();
    }
  }

  async #list(real: string, inv: Invocation & { kind: "file" }): Promise<AttemptOutcome<FileOutput>> {
    const dir = await this.#openDir(real).catch((err) => {
      if (err instanceof PathError && err.code === "ERR_EXEC_PATH_RACE") {
        return lstat(real).then((st) => {
          if (!st.isDirectory()) deny("ERR_EXEC_PATH_TYPE", "not a directory");
          throw err;
        });
      }
      throw err;
    });
    try {
      const entries = await readdir(`/proc/self/fd/${dir.fd}`, { withFileTypes: true });
      if (entries.length > this.#maxList)
        deny("ERR_EXEC_OUTPUT_TOO_LARGE", `more than ${this.#maxList} entries`);
      const out = entries
        .map((e) => ({
          name: e.name,
          type: e.isFile()
            ? ("file" as const)
            : e.isDirectory()
              ? ("directory" as const)
              : e.isSymbolicLink()
                ? ("symlink" as const)
                : ("other" as const),
        }))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      return { invocation: inv, raw: Buffer.from(JSON.stringify(out)), output: { op: "list", entries: out } };
    } finally {
      await dir.close();
    }
  }
}
