// `npm run bench -- journal-verify`: issue 35's verify row alone — a batch-signed segment
// journal of BENCH_VERIFY_ENTRIES entries (default 1,000,000) verified from its segments
// on one core and on all cores, beside the raw verify floor (hash + Merkle proof + one
// signature per batch, no I/O, no JSON) on one core and on all, all in the same run.
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { generateKeyPair } from "../src/crypto/index.js";
import { buildJournal, verifyTable, verifyTimes } from "./_segment-journal.js";

async function main(): Promise<void> {
  const entries = Number(process.env.BENCH_VERIFY_ENTRIES ?? 1_000_000);
  const dir = mkdtempSync(join(tmpdir(), "warden-bench-verify-"));
  try {
    const key = generateKeyPair("ed25519");
    const path = join(dir, "verify.db");
    const load0 = loadavg()[0]!.toFixed(1);
    await buildJournal(path, key, entries);
    const v = await verifyTimes(path, key, entries);
    process.stdout.write(
      `journal verify, batch signatures (load average ${load0} before, ${loadavg()[0]!.toFixed(1)} after)\n\n${verifyTable(entries, v)}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
