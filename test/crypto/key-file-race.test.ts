// Two first starts racing on a fresh directory (parallel hook processes, a fleet starting
// together): one creates the key, the others must read either no file or the whole key —
// never a partial one. Each round spawns processes that create-or-load the same key file.
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/repo.js";

const SCRIPT = `
import { existsSync } from "node:fs";
import { generateKeyPair, loadPrivateKeyFile, saveKeyPair } from ${JSON.stringify(join(REPO_ROOT, "dist/src/crypto/index.js"))};
const dir = process.argv[1];
const pem = dir + "/journal.db.key.pem";
for (let i = 0; i < 3; i++) {
  if (existsSync(pem)) { loadPrivateKeyFile(pem); continue; }
  try { saveKeyPair(generateKeyPair("ed25519"), dir, { name: "journal.db.key" }); }
  catch (e) { if (e.code !== "ERR_CRYPTO_KEY_FILE_EXISTS") throw e; loadPrivateKeyFile(pem); }
}
`;

const run = (dir: string) =>
  new Promise<{ code: number | null; err: string }>((res) => {
    const c = spawn(process.execPath, ["--input-type=module", "-e", SCRIPT, dir], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let err = "";
    c.stderr.on("data", (d) => {
      err += String(d);
    });
    c.on("close", (code) => res({ code, err }));
  });

describe("key files created by racing first starts", () => {
  it("every racer loads a whole key: none reads a partially written file", async () => {
    for (let round = 0; round < 6; round++) {
      const dir = mkdtempSync(join(tmpdir(), "warden-key-race-"));
      const out = await Promise.all(Array.from({ length: 6 }, () => run(dir)));
      expect(out.filter((o) => o.code !== 0).map((o) => o.err.slice(0, 300))).toEqual([]);
    }
  });
});
