// Runs every compiled benchmark in dist/bench (each prints its own table), one at a
// time so they do not compete for the machine's cores. `npm run bench -- NAME` runs one.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith(".js") && f !== "run-all.js" && !f.startsWith("_"))
  .filter((f) => only.length === 0 || only.includes(f.replace(/\.js$/, "")))
  .sort();

let failed = 0;
for (const f of files) {
  process.stdout.write(`\n## ${f.replace(/\.js$/, "")}\n\n`);
  const res = spawnSync(process.execPath, [join(here, f)], { stdio: "inherit" });
  if (res.status !== 0) failed++;
}
process.exitCode = failed === 0 ? 0 : 1;
