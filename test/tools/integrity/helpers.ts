// Shared fixtures for the integrity tests: fresh P-256 keys, discovery documents and a
// small but complete tool contract. (The SchemaPin project's own fixtures are in
// test/interop/tools/integrity/schemapin-fixtures.ts.)
import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateKeyPair, type KeyPair } from "../../../src/crypto/index.js";
import { type ToolContract, ToolContractSchema } from "../../../src/tools/contract-schema.js";
import {
  buildDiscoveryDocument,
  type DiscoveryDocument,
  parseDiscoveryDocument,
} from "../../../src/tools/integrity/index.js";

export function discoveryOf(value: unknown): DiscoveryDocument {
  const r = parseDiscoveryDocument(value);
  if (!r.ok) throw new Error(`fixture discovery did not parse: ${r.code} ${r.message}`);
  return r.document;
}

export function p256(): KeyPair {
  return generateKeyPair("p256");
}

export function discoveryFor(pair: KeyPair, revoked: string[] = []): DiscoveryDocument {
  return discoveryOf(
    buildDiscoveryDocument({ publicKey: pair.publicKey, developerName: "Test Dev", revokedKeys: revoked }),
  );
}

export function p384(): { privateKey: KeyObject; publicKey: KeyObject } {
  return generateKeyPairSync("ec", { namedCurve: "secp384r1" });
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "warden-integrity-"));
}

export function sampleContract(overrides: { name?: string; pattern?: string } = {}): ToolContract {
  return ToolContractSchema.parse({
    tool: {
      name: overrides.name ?? "whois_lookup",
      version: "1.0.0",
      binary: "whois",
      description: "WHOIS lookup for a domain",
      timeout_seconds: 30,
      risk_tier: "low",
    },
    args: {
      target: {
        position: 1,
        required: true,
        type: "string",
        pattern: overrides.pattern ?? "^[a-z0-9.-]+$",
        description: "domain to look up",
      },
    },
    command: { exec: ["whois", "{target}"] },
    output: { format: "text", schema: { type: "object", properties: { raw_output: { type: "string" } } } },
    scope: { allowed_hosts: ["*.example.com"] },
  });
}
