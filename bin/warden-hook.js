#!/usr/bin/env node
// The lean hook entry: what a host's command hook runs (`warden hooks install` writes it with
// absolute paths: '<node>' '<pkg>/bin/warden-hook.js' <host> [--dir DIR]). It imports only
// Node's built-ins: it reads the event on stdin, hands it to the hook daemon over the Unix
// socket in the state directory (with the host name, the token read from the 0600 token
// file and the host's *_PROJECT_DIR variables), and prints the daemon's answer (stdout,
// stderr, exit code) as the one-shot `warden hooks <host>` would. A daemon that is not
// running is started (detached `warden hooks daemon --foreground`) and waited for, at most
// 8 s. Any failure — no daemon, a daemon that dies mid-answer, a refused token, no answer in
// 12 s — prints a coded reason on stderr and exits 2: the hosts' blocking exit code (fail
// closed). docs/hooks-daemon.md. The socket protocol is src/hooks/daemon-socket.ts's; a
// host whose payload does not name its event (Copilot) gets `--event E` on its command line.
import { closeSync, mkdirSync, openSync, readFileSync, readSync, writeSync } from "node:fs";
import { connect } from "node:net";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const MAX_EVENT_BYTES = 16 * 1024 * 1024;
const START_WAIT_MS = 8_000;
const ANSWER_WAIT_MS = 12_000;
/** What a host reads on stdout when the entry fails, besides exit 2 (hosts that read JSON). */
const FAILURE_STDOUT = {
  cursor: (why) =>
    `${JSON.stringify({ permission: "deny", continue: false, user_message: why, agent_message: why })}\n`,
};

class EntryError extends Error {
  constructor(code, message, connectFailed = false) {
    super(message);
    this.code = code;
    this.connectFailed = connectFailed;
  }
}

/**
 * `<host> [--dir DIR] [--event E] [--cloud-agent]`: `--event` names the event a host's
 * payload does not (GitHub Copilot's camelCase payloads), `--cloud-agent` answers as for the
 * Copilot coding agent (also when $COPILOT_AGENT_PROMPT is set) — both passed to the daemon.
 */
function parseArgs(argv) {
  const host = argv[2] ?? "";
  if (!/^[a-z][a-z0-9-]{0,31}$/.test(host))
    throw new EntryError("ERR_HOOK_CONFIG_INVALID", "usage: warden-hook <host> [--dir DIR] [--event E]");
  let dir = process.env.WARDEN_HOOKS_DIR || join(homedir(), ".warden", "hooks");
  const extra = {};
  if (process.env.COPILOT_AGENT_PROMPT !== undefined) extra.cloudAgent = true;
  for (let i = 3; i < argv.length; i++) {
    if (argv[i] === "--dir" && argv[i + 1] !== undefined) dir = argv[++i];
    else if (argv[i] === "--event" && /^[A-Za-z]{1,64}$/.test(argv[i + 1] ?? "")) extra.event = argv[++i];
    else if (argv[i] === "--cloud-agent") extra.cloudAgent = true;
    else throw new EntryError("ERR_HOOK_CONFIG_INVALID", `unknown argument ${String(argv[i]).slice(0, 64)}`);
  }
  return { host, dir: resolve(dir), extra };
}

/** stdin to its end: synchronous reads (no stream set up), the stream only for a non-blocking pipe. */
async function readStdin() {
  const chunks = [];
  let size = 0;
  const add = (c) => {
    size += c.length;
    if (size > MAX_EVENT_BYTES) throw new EntryError("ERR_HOOK_EVENT_TOO_LARGE", "stdin over 16 MiB");
    chunks.push(c);
  };
  try {
    for (;;) {
      const buf = Buffer.allocUnsafe(65536);
      const n = readSync(0, buf, 0, buf.length, null);
      if (n === 0) return Buffer.concat(chunks);
      add(buf.subarray(0, n));
    }
  } catch (err) {
    if (err instanceof EntryError || (err.code !== "EAGAIN" && err.code !== "EWOULDBLOCK")) throw err;
  }
  for await (const c of process.stdin) add(c);
  return Buffer.concat(chunks);
}

/** The host's workspace variables (CLAUDE_PROJECT_DIR, …): the daemon picks its adapter's. */
function projectEnv() {
  const env = {};
  for (const [k, v] of Object.entries(process.env))
    if (/^[A-Z][A-Z0-9]*_PROJECT_DIR$/.test(k) && v) env[k] = v;
  return env;
}

function readToken(dir) {
  try {
    return readFileSync(join(dir, "daemon.token"), "utf8").trim();
  } catch {
    return undefined;
  }
}

/** One exchange with the daemon; `connectFailed` when nothing was sent (safe to retry). */
function exchange(dir, header, body) {
  return new Promise((resolveAnswer, reject) => {
    const sock = connect(join(dir, "daemon.sock"));
    const chunks = [];
    let connected = false;
    let settled = false;
    const settle = (fn, v) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn(v);
    };
    const timer = setTimeout(() => {
      sock.destroy();
      settle(
        reject,
        new EntryError("ERR_HOOK_TIMEOUT", `no answer from the hook daemon in ${ANSWER_WAIT_MS} ms`),
      );
    }, ANSWER_WAIT_MS);
    sock.on("connect", () => {
      connected = true;
      sock.write(`${JSON.stringify(header)}\n`);
      sock.end(body);
    });
    sock.on("data", (c) => chunks.push(c));
    sock.on("error", (e) => {
      const why = connected
        ? `the hook daemon failed mid-answer (${e.code ?? e.message})`
        : `no hook daemon (${e.code ?? e.message})`;
      settle(reject, new EntryError("ERR_HOOK_DAEMON_UNAVAILABLE", why, !connected));
    });
    sock.on("close", () => {
      try {
        const a = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        if ((a.exitCode !== 0 && a.exitCode !== 2) || typeof a !== "object") throw new Error("bad");
        settle(resolveAnswer, a);
      } catch {
        settle(
          reject,
          new EntryError("ERR_HOOK_DAEMON_UNAVAILABLE", "the hook daemon closed without an answer"),
        );
      }
    });
  });
}

async function startDaemon(dir) {
  const { spawn } = await import("node:child_process");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const log = openSync(join(dir, "daemon.log"), "a", 0o600);
  const launcher = join(dirname(fileURLToPath(import.meta.url)), "warden.js");
  const args = [launcher, "hooks", "daemon", "--foreground", "--dir", dir, "--idle-minutes", "60"];
  const child = spawn(process.execPath, args, { detached: true, stdio: ["ignore", log, log], cwd: dir });
  child.unref();
  closeSync(log);
}

async function answer(host, dir, body, extra = {}) {
  const deadline = Date.now() + START_WAIT_MS;
  let started = false;
  for (;;) {
    const token = readToken(dir);
    try {
      if (token === undefined)
        throw new EntryError("ERR_HOOK_DAEMON_UNAVAILABLE", "no daemon token yet", true);
      return await exchange(dir, { v: 1, token, host, env: projectEnv(), ...extra }, body);
    } catch (err) {
      if (!(err instanceof EntryError) || !err.connectFailed) throw err;
      if (!started) {
        started = true;
        await startDaemon(dir);
      } else if (Date.now() > deadline) {
        throw new EntryError(
          "ERR_HOOK_DAEMON_UNAVAILABLE",
          `the hook daemon did not start within ${START_WAIT_MS} ms (see ${join(dir, "daemon.log")})`,
        );
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

/** Writes to fd 1 or 2 synchronously (no stream set up); a non-blocking pipe gets the stream. */
function emit(fd, text) {
  const buf = Buffer.from(text, "utf8");
  let off = 0;
  try {
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
  } catch (err) {
    if (err.code !== "EAGAIN") throw err;
    (fd === 1 ? process.stdout : process.stderr).write(buf.subarray(off));
  }
}

function fail(host, err) {
  const code = err instanceof EntryError ? err.code : "ERR_HOOK_DAEMON_UNAVAILABLE";
  const why = `Warden: ${code}: ${err instanceof Error ? err.message : String(err)} (fail-closed)`;
  const out = Object.hasOwn(FAILURE_STDOUT, host) ? FAILURE_STDOUT[host](why) : "";
  if (out) emit(1, out);
  emit(2, `${why}\n`);
  process.exitCode = 2;
}

async function main() {
  let host = "";
  try {
    const args = parseArgs(process.argv);
    host = args.host;
    const a = await answer(host, args.dir, await readStdin(), args.extra);
    // Synchronous writes to the inherited descriptors: no stream is set up for them.
    if (typeof a.stdout === "string" && a.stdout) emit(1, a.stdout);
    if (typeof a.stderr === "string" && a.stderr) emit(2, a.stderr);
    process.exitCode = a.exitCode;
  } catch (err) {
    fail(host, err);
  }
}

await main();
