// `warden canon FILE` and `warden hash FILE`: canonical JSON and its sha256.
import type { Command } from "commander";
import { canonicalJson, sha256Of } from "../../contracts/index.js";
import { type CliContext, readJsonFile } from "../io.js";

export function registerCanon(program: Command, ctx: CliContext): void {
  program
    .command("canon")
    .description("print the RFC 8785 canonical JSON of a JSON file")
    .argument("<file>", "JSON file")
    .action((file: string) => {
      ctx.io.out(`${canonicalJson(readJsonFile(file))}\n`);
    });
  program
    .command("hash")
    .description("print sha256:<hex> of the canonical JSON of a JSON file")
    .argument("<file>", "JSON file")
    .action((file: string) => {
      ctx.io.out(`${sha256Of(readJsonFile(file))}\n`);
    });
}
