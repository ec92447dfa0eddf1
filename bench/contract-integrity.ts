// Contract integrity costs on the project's net_scan contract (bench/fixtures): schemapin-v1 canonicalization
// beside RFC 8785 (same run), SchemaPin sign/verify in both hash modes, and a full
// verifyContractIntegrity (signature file read, discovery key, pin check) beside a bare
// ES256 verify of the same bytes as the baseline.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canonicalJson } from "../src/contracts/index.js";
import { generateKeyPair, verify } from "../src/crypto/index.js";
import { contractToCanonical, loadContract } from "../src/tools/index.js";
import {
  buildDiscoveryDocument,
  PinStore,
  parseDiscoveryDocument,
  schemapinCanonical,
  schemapinCanonicalBytes,
  signContractFile,
  signSchemaPin,
  verifyContractIntegrity,
  verifySignedSchema,
} from "../src/tools/integrity/index.js";
import { measure, table } from "./_stats.js";

const manifest = join(import.meta.dirname, "..", "..", "bench", "fixtures", "net_scan.clad.toml");
const loaded = loadContract(manifest);
if (!loaded.ok) throw new Error(loaded.message);
const contract = loaded.tool.contract;
const canonical = contractToCanonical(contract);

const pair = generateKeyPair("p256");
const discovery = parseDiscoveryDocument(
  buildDiscoveryDocument({ publicKey: pair.publicKey, developerName: "bench" }),
);
if (!discovery.ok) throw new Error(discovery.message);
const doubleSig = signSchemaPin(pair.privateKey, canonical, "double");
const singleSig = signSchemaPin(pair.privateKey, canonical, "single");
const bytes = schemapinCanonicalBytes(canonical);
const rawSig = Buffer.from(singleSig, "base64");

const dir = mkdtempSync(join(tmpdir(), "warden-bench-"));
const copy = join(dir, "net_scan.clad.toml");
signContractFile(contract, copy, { privateKey: pair.privateKey, domain: "bench.example" });
const pins = PinStore.inMemory();

const canonBase = measure("canonicalJson RFC 8785 (baseline)", 5000, () => canonicalJson(canonical));
process.stdout.write(
  `### canonicalization (net_scan contract, ${bytes.length} bytes)\n\n${table(
    [canonBase, measure("schemapinCanonical", 5000, () => schemapinCanonical(canonical))],
    canonBase,
  )}\n`,
);

const base = measure("es256 verify of canonical bytes (baseline)", 2000, () =>
  verify(pair.publicKey, bytes, rawSig),
);
const rows = [
  base,
  measure("signSchemaPin double", 2000, () => signSchemaPin(pair.privateKey, canonical, "double")),
  measure("verifySignedSchema double", 2000, () =>
    verifySignedSchema({ schema: canonical, signature: doubleSig }, { discovery: discovery.document }),
  ),
  measure("verifySignedSchema single", 2000, () =>
    verifySignedSchema(
      { schema: canonical, signature: singleSig },
      { discovery: discovery.document, hashMode: "single" },
    ),
  ),
  measure("verifyContractIntegrity (file + pins)", 2000, () =>
    verifyContractIntegrity(contract, copy, { discovery: discovery.document, pins }),
  ),
];
process.stdout.write(`### signatures\n\n${table(rows, base)}`);
