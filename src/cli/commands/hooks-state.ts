// `warden hooks status` and `warden hooks clear`: a human, outside the agent, sees what the
// hook engine holds about each host session (taint sources, why it is poisoned, denials,
// counts) and clears one session's taint and poison (docs/hooks-sessions.md). The clear is
// journaled (`warden.hooks.clear`: who, when, what was cleared) in the hooks journal before
// the state changes, and needs `--yes` or an answer typed at a terminal. The state
// directory is masked from the agent's sandbox and its file tools, so these commands work
// only from outside the agent.
import { existsSync, mkdirSync } from "node:fs";
import { homedir, userInfo } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline/promises";
import type { Command } from "commander";
import { CliError } from "../../contracts/index.js";
import {
  clearSession,
  createEngine,
  daemonPaths,
  type EngineState,
  HOOK_CLEAR_EVENT,
  isDaemonPid,
  isProtected,
  loadState,
  readPid,
  type SessionState,
  STATE_LIMITS,
  sessionPrincipal,
} from "../../hooks/index.js";
import type { CliContext } from "../io.js";
import { addOptions, defineOptions, type OptionsOf } from "../options.js";
import { journalKey } from "../runtime.js";

const DIR = {
  flags: "--dir <dir>",
  description: "the hooks directory (default: $WARDEN_HOOKS_DIR or ~/.warden/hooks)",
  kind: "value",
} as const;

const STATUS_OPTIONS = defineOptions({
  dir: DIR,
  session: { flags: "--session <id>", description: "one session in detail", kind: "value" },
  json: { flags: "--json", description: "print JSON", kind: "flag" },
});

const CLEAR_OPTIONS = defineOptions({
  dir: DIR,
  session: { flags: "--session <id>", description: "the session to clear", kind: "value", required: true },
  yes: { flags: "--yes", description: "confirm without a prompt (needed without a terminal)", kind: "flag" },
  note: { flags: "--note <text>", description: "why (journaled with the clear)", kind: "value" },
});

function stateDir(dir: string | undefined): string {
  return resolve(dir ?? process.env.WARDEN_HOOKS_DIR ?? join(homedir(), ".warden", "hooks"));
}

/** One session as status shows it. */
function view(id: string, s: SessionState) {
  return {
    session: id,
    poisoned: isProtected(s),
    ended: s.ended,
    startedAt: s.startedAt,
    lastSeenAt: s.lastSeenAt ?? null,
    runId: s.runId,
    workspace: s.workspace ?? null,
    poisonedReasons: s.poisoned,
    taintSources: s.taint.map((t) => ({ source: t.source, origin: t.origin, addedAt: t.addedAt ?? null })),
    denials: s.denials,
    counts: s.counts,
    clears: s.epoch,
  };
}

function summaryLine(v: ReturnType<typeof view>): string {
  const state = v.poisoned ? "POISONED" : v.taintSources.length > 0 ? "tainted" : "clean";
  const calls = v.counts.tool_calls ?? 0;
  return `${v.session}  ${state}${v.ended ? " (ended)" : ""}  last ${v.lastSeenAt ?? v.startedAt}  ${calls} tool calls  ${v.denials.length} denials  ${v.taintSources.length} taint`;
}

function detail(v: ReturnType<typeof view>): string {
  const lines = [summaryLine(v), `  run ${v.runId}${v.workspace ? `  workspace ${v.workspace}` : ""}`];
  for (const p of v.poisonedReasons) lines.push(`  poisoned: ${p}`);
  for (const t of v.taintSources)
    lines.push(`  taint: ${t.source} from ${t.origin}${t.addedAt ? ` at ${t.addedAt}` : ""}`);
  for (const d of v.denials)
    lines.push(`  denied ${d.at} ${d.hook}${d.tool ? ` ${d.tool}` : ""}: ${d.what} — ${d.reason}`);
  const counts = Object.entries(v.counts).map(([k, n]) => `${k} ${n}`);
  if (counts.length > 0) lines.push(`  counts: ${counts.join(", ")}`);
  if (v.clears > 0) lines.push(`  cleared ${v.clears} time(s)`);
  return `${lines.join("\n")}\n`;
}

function status(ctx: CliContext, o: OptionsOf<typeof STATUS_OPTIONS>): void {
  const path = join(stateDir(o.dir), "state.json");
  const state: EngineState = loadState(path);
  const all = Object.entries(state.sessions).map(([id, s]) => view(id, s));
  const shown = o.session === undefined ? all : all.filter((v) => v.session === o.session);
  if (o.session !== undefined && shown.length === 0)
    throw new CliError("ERR_CLI_INPUT", `no session ${o.session} in ${path}`);
  const poisoned = all.filter((v) => v.poisoned).length;
  if (o.json) {
    const out = {
      state: path,
      bound: STATE_LIMITS.MAX_SESSIONS,
      total: all.length,
      poisoned,
      sessions: shown,
    };
    ctx.io.out(`${JSON.stringify(out, null, 2)}\n`);
    return;
  }
  if (o.session !== undefined) {
    ctx.io.out(detail(shown[0] as ReturnType<typeof view>));
    return;
  }
  ctx.io.out(`${path}: ${all.length} sessions (bound ${STATE_LIMITS.MAX_SESSIONS}), ${poisoned} poisoned\n`);
  for (const v of shown) ctx.io.out(`${summaryLine(v)}\n`);
}

/** A confirmation typed at a terminal: the session id (or "yes"). */
async function confirmed(session: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const a = await rl.question(`Clear the taint and poison of session ${session}? Type its id or "yes": `);
    return a.trim() === session || a.trim().toLowerCase() === "yes";
  } finally {
    rl.close();
  }
}

async function clear(ctx: CliContext, o: OptionsOf<typeof CLEAR_OPTIONS>): Promise<void> {
  const dir = stateDir(o.dir);
  const path = join(dir, "state.json");
  const before = loadState(path).sessions[o.session];
  if (before === undefined) throw new CliError("ERR_CLI_INPUT", `no session ${o.session} in ${path}`);
  if (!o.yes) {
    const tty = ctx.io.isTTY && Boolean(process.stdin.isTTY);
    if (!tty) throw new CliError("ERR_CLI_USAGE", "clear needs --yes, or a terminal to confirm at");
    if (!(await confirmed(o.session))) throw new CliError("ERR_CLI_USAGE", "not confirmed; nothing cleared");
  }
  // Journaled first: a clear the journal cannot record is not made.
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const db = join(dir, "journal.db");
  if (!existsSync(db) && !existsSync(`${db}.key.pem`)) ctx.io.err(`${db}: a new hooks journal is created\n`);
  const engine = await createEngine({ journal: { path: db, signer: journalKey(db, undefined).pair } });
  try {
    const who = userInfo();
    await engine.runtime.journal.append({
      type: HOOK_CLEAR_EVENT,
      body: {
        session_id: o.session.slice(0, 256),
        by: { user: who.username.slice(0, 256), uid: who.uid, note: o.note?.slice(0, 1024) ?? null },
        at: new Date().toISOString(),
        taint: before.taint.map((t) => `${t.source}:${t.origin}`.slice(0, 1024)),
        poisoned: before.poisoned,
        epoch: before.epoch + 1,
      },
    });
    // The Gate's quarantine of the session's principal (a denial threshold, a behavioural
    // rule) is lifted with it: an operator's action, recorded as the lift's evidence.
    const host = before.runId.split(":")[1] ?? "";
    await engine.runtime.sessions.principals.lift(sessionPrincipal(host, o.session), {
      by: "warden hooks clear",
      session_id: o.session.slice(0, 256),
    });
  } finally {
    await engine.close();
  }
  const cleared = clearSession(path, o.session);
  if (cleared === undefined)
    throw new CliError("ERR_CLI_INPUT", `session ${o.session} vanished from ${path}`);
  ctx.io.out(
    `${o.session}: cleared ${cleared.poisoned.length} poisoned reasons and ${cleared.taint.length} taint labels, lifted the session's quarantine (journaled as ${HOOK_CLEAR_EVENT})\n`,
  );
  // A running hook daemon keeps a quarantine in memory (a read never lifts one): it is stopped
  // and starts again, with the lift, on the next hook event.
  const pid = readPid(daemonPaths(dir).pid);
  if (pid !== undefined && isDaemonPid(pid)) {
    process.kill(pid, "SIGTERM");
    ctx.io.out(`stopped the hook daemon (pid ${pid}); the next hook event starts it again\n`);
  }
}

/** Registers `hooks status` and `hooks clear` under `hooks`. */
export function registerHooksState(hooks: Command, ctx: CliContext): void {
  addOptions(
    hooks.command("status").description("show the hook engine's sessions: taint, poison, denials"),
    STATUS_OPTIONS,
  ).action((o: OptionsOf<typeof STATUS_OPTIONS>) => status(ctx, o));
  addOptions(
    hooks
      .command("clear")
      .description("clear one session's taint and poison (journaled; --yes or a terminal)"),
    CLEAR_OPTIONS,
  ).action((o: OptionsOf<typeof CLEAR_OPTIONS>) => clear(ctx, o));
}
