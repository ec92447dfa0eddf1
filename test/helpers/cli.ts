// Runs the CLI in-process with captured output.
import { main } from "../../src/cli/main.js";

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

export async function runCli(...args: string[]): Promise<CliRun> {
  let out = "";
  let err = "";
  const code = await main(["node", "warden", ...args], {
    out: (t) => {
      out += t;
    },
    err: (t) => {
      err += t;
    },
    isTTY: false,
  });
  return { code, out, err };
}
