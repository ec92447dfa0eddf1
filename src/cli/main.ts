// The `warden` command. Each layer registers its subcommands from src/cli/commands/.
// Exit codes: 0 success, 1 a negative outcome (verification failed, denied), 2 bad input.
import { Command, CommanderError } from "commander";
import { registerCanon } from "./commands/canon.js";
import { registerContract } from "./commands/contract.js";
import { registerExec } from "./commands/exec.js";
import { registerGate } from "./commands/gate.js";
import { registerInit } from "./commands/init.js";
import { registerJournal } from "./commands/journal.js";
import { registerKeys } from "./commands/keys.js";
import { registerPolicy } from "./commands/policy.js";
import { registerRun } from "./commands/run.js";
import { registerSidecar } from "./commands/sidecar.js";
import { type CliContext, type CliIo, EXIT, formatError, processIo } from "./io.js";

export function buildProgram(ctx: CliContext): Command {
  const program = new Command("warden")
    .description("Warden: a zero-trust runtime for AI agents")
    .version("0.1.0")
    .exitOverride()
    .configureOutput({ writeOut: (s) => ctx.io.out(s), writeErr: (s) => ctx.io.err(s) });
  registerKeys(program, ctx);
  registerJournal(program, ctx);
  registerCanon(program, ctx);
  registerContract(program, ctx);
  registerPolicy(program, ctx);
  registerRun(program, ctx);
  registerExec(program, ctx);
  registerGate(program, ctx);
  registerSidecar(program, ctx);
  registerInit(program, ctx);
  return program;
}

/** Runs the CLI with `argv` as in process.argv (node, script, ...args); resolves to the exit code. */
export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  const ctx: CliContext = { io, exitCode: EXIT.ok };
  const program = buildProgram(ctx);
  try {
    await program.parseAsync(argv);
    return ctx.exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    io.err(formatError(err));
    return EXIT.usage;
  }
}
