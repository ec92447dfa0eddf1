// Canonicalization, hashing and signature throughput on a DARE-sized record,
// beside a same-run baseline of JSON.stringify on the same value.
import { canonicalJson, sha256Of } from "../src/contracts/index.js";
import { generateKeyPair, sign, verify } from "../src/crypto/index.js";
import { measure, table } from "./_stats.js";

const record = {
  schema_version: "1.0",
  event_type: "dare.tool.request",
  request_id: "0192f3a4-7b1c-7d2e-8f90-a1b2c3d4e5f6",
  run_id: "0192f3a4-7b1c-7d2e-8f90-a1b2c3d4e5f7",
  trace_id: "4bf92f3577b34da6a3ce929d0e0e4736",
  agent_instance_id: "bench-agent",
  tool_name: "http.fetch",
  arguments: { url: "https://example.org/a/b?c=d", method: "GET", headers: { accept: "application/json" } },
  taint: [{ source: "web", origin: "example.org" }],
};
const N = 20_000;
const baseline = measure("JSON.stringify (baseline)", N, () => JSON.stringify(record));
const rows = [
  baseline,
  measure("canonicalJson", N, () => canonicalJson(record)),
  measure("sha256Of", N, () => sha256Of(record)),
];
const msg = Buffer.from(canonicalJson(record));
const ed = generateKeyPair("ed25519");
const p256 = generateKeyPair("p256");
const edSig = sign(ed.privateKey, msg);
const pSig = sign(p256.privateKey, msg);
rows.push(
  measure("ed25519 sign", 5000, () => sign(ed.privateKey, msg)),
  measure("ed25519 verify", 5000, () => verify(ed.publicKey, msg, edSig)),
  measure("es256 sign (DER)", 2000, () => sign(p256.privateKey, msg)),
  measure("es256 verify (DER)", 2000, () => verify(p256.publicKey, msg, pSig)),
);
process.stdout.write(table(rows, baseline));
