// `npm run demo`: a small real walkthrough of what Warden has today — canonicalize and
// hash a DARE record, generate keys, sign and verify, and show that tampering is caught.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canonicalJson, newTraceId, sha256Of, uuidv7 } from "../src/contracts/index.js";
import {
  generateKeyPair,
  loadPrivateKeyFile,
  publicKeyInfo,
  saveKeyPair,
  signCanonical,
  verifyCanonical,
} from "../src/crypto/index.js";

const line = (label: string, value: string) => process.stdout.write(`${label.padEnd(28)} ${value}\n`);

const record = {
  schema_version: "1.0",
  event_type: "dare.tool.request",
  request_id: uuidv7(),
  run_id: uuidv7(),
  trace_id: newTraceId(),
  agent_instance_id: "demo-agent",
  tool_name: "http.fetch",
  arguments: { url: "https://example.org/report", method: "GET" },
};

process.stdout.write("Warden — the model proposes, Warden disposes.\n\n1. Canonical JSON (RFC 8785)\n");
line("canonical bytes", `${canonicalJson(record).slice(0, 72)}…`);
line("sha256", sha256Of(record));
line(
  "same hash, keys reordered",
  String(sha256Of(Object.fromEntries(Object.entries(record).reverse())) === sha256Of(record)),
);

const dir = mkdtempSync(join(tmpdir(), "warden-demo-"));
try {
  process.stdout.write("\n2. Keys (private files mode 0600, key id = RFC 7638 thumbprint)\n");
  for (const type of ["ed25519", "p256"] as const) {
    const files = saveKeyPair(generateKeyPair(type), dir);
    const pair = loadPrivateKeyFile(files.privatePem);
    const info = publicKeyInfo(pair.publicKey);
    line(`${type} key id`, info.keyId);
    line(`${type} fingerprint`, `${info.fingerprint.slice(0, 30)}…`);

    process.stdout.write(`\n3. Sign and verify with ${type}\n`);
    const sig = signCanonical(pair.privateKey, record);
    line("signature (base64url)", `${sig.slice(0, 40)}…`);
    line("verifies", String(verifyCanonical(pair.publicKey, record, sig)));
    const tampered = { ...record, arguments: { ...record.arguments, url: "https://evil.example/exfil" } };
    line("tampered record verifies", String(verifyCanonical(pair.publicKey, tampered, sig)));
    process.stdout.write("\n");
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
