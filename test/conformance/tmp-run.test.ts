import { it } from "vitest";
import { runCli } from "../helpers/cli.js";
it("run", async () => { const r = await runCli("conformance", ...(process.env.SPEC ? ["--spec", process.env.SPEC] : [])); console.log(r.code, r.out, r.err); }, 300000);
