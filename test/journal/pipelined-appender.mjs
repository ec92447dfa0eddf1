// Child process for pipeline-process.test.ts: like test/fixtures/journal/appender.mjs,
// but with signing workers, so that appends are chained on a predicted head and
// signed before their transaction. Prints each seq once its append resolved.
// Usage: node pipelined-appender.mjs BUILD_DIR DB KEYFILE COUNT INFLIGHT TAG WORKERS [START_AT_EPOCH_MS]
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [build, db, keyFile, countArg, inflightArg, tag, workers, startAt = "0"] = process.argv.slice(2);
const { loadPrivateKeyFile } = await import(pathToFileURL(join(build, "src/crypto/index.js")).href);
const { openJournal, SqliteJournalStore } = await import(
  pathToFileURL(join(build, "src/journal/index.js")).href
);
const count = Number(countArg);
const inflight = Math.max(1, Number(inflightArg));
const store = SqliteJournalStore.open(db, { busyTimeoutMs: 30_000 });
const journal = await openJournal({
  store,
  signer: loadPrivateKeyFile(keyFile),
  signingWorkers: Number(workers),
});

await new Promise((r) => setTimeout(r, Math.max(0, Number(startAt) - Date.now())));

let issued = 0;
const out = [];
const flush = () => {
  if (out.length > 0) process.stdout.write(`${out.splice(0).join("\n")}\n`);
};
async function worker() {
  while (count === 0 || issued < count) {
    const i = issued++;
    const e = await journal.append({
      type: "ObservationsCollected",
      run_id: `${tag}-${process.pid}`,
      body: { observation_count: i, writer: tag, pad: "x".repeat(i % 200) },
    });
    out.push(String(e.seq));
    flush();
  }
}
await Promise.all(Array.from({ length: inflight }, worker));
flush();
await journal.close();
await store.close();
