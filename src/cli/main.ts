// The `warden` command. Each command's implementation is in src/cli/commands/ and is
// imported only when that command runs: `warden --help` lists the commands from their
// one-line summaries without loading any layer (bench/cli.ts measures it).
// Exit codes: 0 success, 1 a negative outcome (verification failed, denied), 2 bad input.
import { Command, CommanderError } from "commander";
import { type CommandName, SUMMARY } from "./commands/summaries.js";
import { type CliContext, type CliIo, EXIT, processIo } from "./context.js";
import { rootHelp } from "./help.js";

const VERSION = "0.1.0";

type Register = (program: Command, ctx: CliContext) => void;

const COMMANDS: Record<CommandName, () => Promise<Register>> = {
  keys: async () => (await import("./commands/keys.js")).registerKeys,
  journal: async () => (await import("./commands/journal.js")).registerJournal,
  canon: async () => (await import("./commands/canon.js")).registerCanon,
  // canon.ts registers `canon` and `hash` together.
  hash: async () => (await import("./commands/canon.js")).registerCanon,
  contract: async () => (await import("./commands/contract.js")).registerContract,
  policy: async () => (await import("./commands/policy.js")).registerPolicy,
  run: async () => (await import("./commands/run.js")).registerRun,
  exec: async () => (await import("./commands/exec.js")).registerExec,
  gate: async () => (await import("./commands/gate.js")).registerGate,
  sidecar: async () => (await import("./commands/sidecar.js")).registerSidecar,
  init: async () => (await import("./commands/init.js")).registerInit,
  trust: async () => (await import("./commands/trust.js")).registerTrust,
  quarantine: async () => (await import("./commands/quarantine.js")).registerQuarantine,
  identity: async () => (await import("./commands/identity.js")).registerIdentity,
  provenance: async () => (await import("./commands/provenance.js")).registerProvenance,
  hooks: async () => (await import("./commands/hooks.js")).registerHooks,
  mcp: async () => (await import("./commands/mcp.js")).registerMcp,
  export: async () => (await import("./commands/export.js")).registerExport,
  replay: async () => (await import("./commands/replay.js")).registerReplay,
  whatif: async () => (await import("./commands/whatif.js")).registerWhatif,
  shadow: async () => (await import("./commands/shadow.js")).registerShadow,
  db: async () => (await import("./commands/db.js")).registerDb,
  conformance: async () => (await import("./commands/conformance.js")).registerConformance,
};

/** The command `argv` runs (`warden help X` asks for X). */
function invokedCommand(argv: readonly string[]): string | undefined {
  const words = argv.slice(2).filter((a) => !a.startsWith("-"));
  return words[0] === "help" ? words[1] : words[0];
}

/**
 * The program for `argv`: the invoked command fully registered, every other command by
 * its summary only (enough for the root help and for commander's "unknown command").
 */
export async function buildProgram(ctx: CliContext, argv: readonly string[] = []): Promise<Command> {
  const program = new Command("warden")
    .description("Warden: a zero-trust runtime for AI agents")
    .version(VERSION)
    .exitOverride()
    .configureOutput({ writeOut: (s) => ctx.io.out(s), writeErr: (s) => ctx.io.err(s) });
  const invoked = invokedCommand(argv);
  if (invoked !== undefined && Object.hasOwn(COMMANDS, invoked)) {
    (await COMMANDS[invoked as CommandName]())(program, ctx);
  }
  const registered = new Set(program.commands.map((c) => c.name()));
  for (const name of Object.keys(COMMANDS) as CommandName[]) {
    if (!registered.has(name)) program.command(name).description(SUMMARY[name]);
  }
  // The root help is grouped by task (help.ts); a command's own help stays commander's.
  program.helpInformation = () => rootHelp(VERSION);
  return program;
}

/** Runs the CLI with `argv` as in process.argv (node, script, ...args); resolves to the exit code. */
export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  const ctx: CliContext = { io, exitCode: EXIT.ok };
  // Bare `warden` is a person asking what it does: the help, and success.
  if (argv.length <= 2) {
    io.out(rootHelp(VERSION));
    return EXIT.ok;
  }
  try {
    const program = await buildProgram(ctx, argv);
    await program.parseAsync(argv);
    return ctx.exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    const { formatError } = await import("./io.js");
    io.err(formatError(err));
    return EXIT.usage;
  }
}
