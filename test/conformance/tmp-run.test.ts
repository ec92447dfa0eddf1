import { it } from "vitest";
import { runCli } from "../helpers/cli.js";
it("run", async () => { const r = await runCli("conformance", ...(process.env.ARGS ? process.env.ARGS.split(" ") : [])); console.log(r.code, r.out, r.err); }, 300000);
