// `warden canon FILE` and `warden hash FILE`: canonical JSON and its sha256.
import type { Command } from "commander";
import { canonicalJson, sha256Of } from "../../contracts/index.js";
import { type CliContext, readJsonFile } from "../io.js";
import { SUMMARY } from "./summaries.js";

export function registerCanon(program: Command, ctx: CliContext): void {
  program
    .command("canon")
    .description(SUMMARY.canon)
    .argument("<file>", "JSON file")
    .action((file: string) => {
      ctx.io.out(`${canonicalJson(readJsonFile(file))}\n`);
    });
  program
    .command("hash")
    .description(SUMMARY.hash)
    .argument("<file>", "JSON file")
    .action((file: string) => {
      ctx.io.out(`${sha256Of(readJsonFile(file))}\n`);
    });
}
