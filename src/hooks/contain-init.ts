// The init of a contained shell call, run INSIDE the sandbox by bwrap (contain-run.ts):
// the network namespace has only loopback, so this process listens on 127.0.0.1:<port>
// and bridges every connection to the egress proxy's Unix socket (bound in at
// SANDBOX_PROXY_SOCKET), then runs `<shell> -c <command>` (the command read from the file
// bound at SANDBOX_COMMAND) with the proxy variables set and stdio inherited, and exits with
// the command's status (128+n for a signal). There is no DNS in the sandbox: clients name
// hosts to the proxy, which resolves them outside.
//   node contain-init.js <shell>
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { connect, createServer, type Socket } from "node:net";
import { constants } from "node:os";
import { proxyEnv, SANDBOX_COMMAND, SANDBOX_CWD, SANDBOX_GATE, SANDBOX_PROXY_SOCKET } from "./contain-env.js";

/**
 * The shell's arguments: the command as it is, or — when the runner carries the final
 * directory over (SANDBOX_CWD bound) — the command file sourced, then `pwd -P` recorded.
 */
function shellArgs(command: string): string[] {
  if (!existsSync(SANDBOX_CWD)) return ["-c", command];
  const script = `. ${SANDBOX_COMMAND}\n__warden_status=$?\npwd -P >${SANDBOX_CWD} 2>/dev/null\nexit $__warden_status`;
  return ["-c", script];
}

/** Waits while the session's gate is shut (the host is writing a file the agent named: contain-gate.ts). */
async function gate(): Promise<void> {
  const frozen = `${SANDBOX_GATE}/frozen`;
  while (existsSync(frozen)) await new Promise((r) => setTimeout(r, 20));
}

function bridge(local: Socket): void {
  const up = connect(SANDBOX_PROXY_SOCKET);
  const end = () => {
    local.destroy();
    up.destroy();
  };
  local.on("error", end);
  up.on("error", end);
  local.pipe(up);
  up.pipe(local);
}

function statusOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  const n = signal !== null ? constants.signals[signal] : undefined;
  return 128 + (n ?? 9);
}

async function main(argv: readonly string[]): Promise<void> {
  const [shell] = argv;
  if (shell === undefined) {
    process.stderr.write("warden contain-init: usage: contain-init.js <shell>\n");
    process.exit(126);
  }
  const command = readFileSync(SANDBOX_COMMAND, "utf8");
  await gate();
  const server = createServer(bridge);
  server.on("error", (err) => {
    process.stderr.write(`warden contain-init: ${err.message}\n`);
    process.exit(126);
  });
  server.listen(0, "127.0.0.1", () => {
    const addr = server.address();
    const port = typeof addr === "object" && addr !== null ? addr.port : 0;
    const child = spawn(shell, shellArgs(command), {
      stdio: "inherit",
      env: { ...process.env, ...proxyEnv(port) },
    });
    for (const s of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(s, () => child.kill(s));
    child.on("error", (err) => {
      process.stderr.write(`warden contain-init: ${err.message}\n`);
      process.exit(127);
    });
    child.on("exit", (code, signal) => process.exit(statusOf(code, signal)));
  });
}

await main(process.argv.slice(2));
