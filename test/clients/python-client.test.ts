// The Python client (clients/python) against a real sidecar on loopback: this file starts
// the sidecar over the adapter tests' world and runs the client's unittest suite with the
// system python3 (standard library only, nothing installed). Without python3 it fails
// and says how to get it: the client is part of what ships. The approver has an Ed25519
// key, as on every `warden init` deployment, so every step-up verdict the client sends must
// carry the approver's signature; the client signs with its pure-Python Ed25519 when the
// `cryptography` module is absent, checked first against signatures Node's crypto made here.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPair, saveKeyPair, sign } from "../../src/crypto/index.js";
import type { SidecarServer } from "../../src/server/index.js";
import {
  AGENT_B_TOKEN,
  AGENT_TOKEN,
  APPROVER_TOKEN,
  openWorld,
  sidecar,
  type World,
} from "../adapters/world.js";
import { REPO_ROOT } from "../helpers/repo.js";

let w: World;
let side: { server: SidecarServer; url: string };
const keys = mkdtempSync(join(tmpdir(), "warden-py-approver-"));
const alice = saveKeyPair(generateKeyPair("ed25519"), keys, { name: "alice" });
beforeAll(async () => {
  w = await openWorld("2s");
  side = await sidecar(w, { approverPublicKeys: [readFileSync(alice.publicPem, "utf8")] });
});

/** Ed25519 vectors made by Node's crypto: the pure-Python signer must reproduce them. */
function nodeVectors(): string {
  const vectors = Array.from({ length: 8 }, (_, i) => {
    const pair = generateKeyPair("ed25519");
    const jwk = pair.privateKey.export({ format: "jwk" }) as { d: string; x: string };
    const message = randomBytes(i * 37);
    return {
      seed: Buffer.from(jwk.d, "base64url").toString("hex"),
      public: Buffer.from(jwk.x, "base64url").toString("hex"),
      message: message.toString("hex"),
      signature: sign(pair.privateKey, message).toString("hex"),
      keyId: pair.keyId,
      pem: pair.privateKey.export({ format: "pem", type: "pkcs8" }).toString(),
    };
  });
  const file = join(keys, "ed25519-vectors.json");
  writeFileSync(file, JSON.stringify(vectors));
  return file;
}
afterAll(async () => {
  await side?.server.close();
  await w?.close();
  rmSync(keys, { recursive: true, force: true });
});

function python(): string | undefined {
  for (const bin of ["python3", "python"]) {
    const r = spawnSync(bin, ["-c", "import sys; print(sys.version_info[0])"], { encoding: "utf8" });
    if (r.status === 0 && r.stdout.trim() === "3") return bin;
  }
  return undefined;
}

function run(bin: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(bin, ["-m", "unittest", "discover", "-v", join("clients", "python", "tests")], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      out += c.toString();
    });
    child.on("close", (code) => resolve({ code, out }));
  });
}

describe("the Python client", () => {
  it("passes its unittest suite against a real sidecar, nothing skipped", async () => {
    const bin = python();
    expect(bin, "python3 is required for the Python client's tests: apt-get install python3").toBeDefined();
    const r = await run(bin as string, {
      WARDEN_URL: side.url,
      WARDEN_AGENT_TOKEN: AGENT_TOKEN,
      WARDEN_AGENT_B_TOKEN: AGENT_B_TOKEN,
      WARDEN_APPROVER_TOKEN: APPROVER_TOKEN,
      WARDEN_APPROVER_KEY: alice.privatePem,
      WARDEN_APPROVER_ID: "alice",
      WARDEN_ED25519_VECTORS: nodeVectors(),
    });
    expect(r.out, r.out).toMatch(/\nOK\s*$/);
    expect(r.out).not.toMatch(/skipped/);
    expect(r.code, r.out).toBe(0);
    // The live tests really ran against this sidecar: its journal holds agent-a's and agent-b's decisions.
    const decided = await side.server.runtime.store.query({ type: "warden.gate.decision" });
    expect(new Set(decided.map((e) => (e.body as { principal_id?: string }).principal_id))).toEqual(
      new Set(["agent-a", "agent-b"]),
    );
  }, 120_000);
});
