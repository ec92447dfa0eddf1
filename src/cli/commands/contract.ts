// `warden contract ...`: tool contracts. The integrity subcommands (sign, verify) are
// registered by tools/integrity; the contract subcommands (validate, check, schema) by
// the tools layer.
import type { Command } from "commander";
import { registerContractIntegrity } from "../../tools/index.js";
import type { CliContext } from "../io.js";

export function registerContract(program: Command, ctx: CliContext): void {
  const group = program.command("contract").description("tool contracts: validate, sign, verify");
  registerContractIntegrity(group, ctx);
}
