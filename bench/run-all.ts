// Runs every compiled benchmark in dist/bench (each prints its own table), one at a
// time so they do not compete for the machine's cores. `npm run bench -- NAME` runs one;
// `npm run bench -- NAME --flag …` passes the flags to it.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
// Names come first; everything from the first `--flag` on is passed to the named benches.
const argv = process.argv.slice(2);
const cut = argv.findIndex((a) => a.startsWith("--"));
const only = cut < 0 ? argv : argv.slice(0, cut);
const passed = cut < 0 ? [] : argv.slice(cut);
const files = readdirSync(here)
  .filter((f) => f.endsWith(".js") && f !== "run-all.js" && !f.startsWith("_"))
  .filter((f) => only.length === 0 || only.includes(f.replace(/\.js$/, "")))
  .sort();

let failed = 0;
for (const f of files) {
  process.stdout.write(`\n## ${f.replace(/\.js$/, "")}\n\n`);
  const res = spawnSync(process.execPath, [join(here, f), ...passed], { stdio: "inherit" });
  if (res.status !== 0) failed++;
}
process.exitCode = failed === 0 ? 0 : 1;
