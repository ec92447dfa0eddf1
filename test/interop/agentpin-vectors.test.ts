// AgentPin interop, read in place from the vectors directory (../shared/vectors/agentpin):
// the Rust-made credential verifies against its discovery document at a clock inside its
// lifetime, the pin hash and key id match, and every extracted upstream unit case holds.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/contracts/index.js";
import { parsePrivateKey, parsePublicKey } from "../../src/crypto/index.js";
import {
  capabilitiesHash,
  capabilitiesSubset,
  capabilityMatches,
  capabilityProblem,
  constraintsSubsetOf,
  dnsTxtName,
  domainPatternMatches,
  KeyPinStore,
  parseDnsTxt,
  pinHashOf,
  publicKeyOfJwk,
  rateLimitPerHour,
  StaticSource,
  spkiKeyIdOf,
  validateDiscovery,
  verifyCredential,
} from "../../src/identity/index.js";
import { readVectorJson, vectorPath } from "./vectors.js";

const TD = ["agentpin", "go", "pkg", "verification", "testdata"] as const;
const td = (f: string) => vectorPath(...TD, f);
const credential = () => readFileSync(td("credential.jwt"), "utf8").trim();
const discovery = () => readVectorJson(...TD, "discovery.json");
const unitCases = readVectorJson("agentpin", "extracted", "unit_cases.json") as Record<
  string,
  Record<string, unknown>
>;
/** One group's list of cases, typed by the test that reads it. */
function group<T extends object>(name: string, list = "cases"): T[] {
  const g = unitCases[name]?.[list];
  if (!Array.isArray(g) || g.length === 0) throw new Error(`unit_cases.json has no ${name}.${list}`);
  return g as T[];
}
type Match = { declared: string; requested: string; expect: boolean };
type Subset = { declared: string[]; requested: string[]; expect: boolean };

async function verifyAt(now: number, audience = "verifier.com") {
  return verifyCredential(credential(), {
    source: new StaticSource([discovery()], [], { issuerFallback: true }),
    pins: new KeyPinStore(),
    audience,
    now,
  });
}

describe("AgentPin vectors: the Rust-made credential", () => {
  it("verifies against discovery.json at now=1777700000 with first_use pinning", async () => {
    const v = await verifyAt(1_777_700_000);
    expect(v.result).toMatchObject({
      valid: true,
      error_code: null,
      agent_id: "urn:agentpin:example.com:test-agent",
      issuer: "example.com",
      capabilities: ["read:data", "write:report"],
      key_pinning: { status: "first_use" },
    });
  });

  it("is CREDENTIAL_EXPIRED one skew past its exp", async () => {
    const v = await verifyAt(1_777_749_815 + 60);
    expect(v.result.error_code).toBe("CREDENTIAL_EXPIRED");
    expect(v.ok ? "" : v.wardenCode).toBe("ERR_IDENTITY_CREDENTIAL_EXPIRED");
  });

  it("is still valid one second before exp+skew", async () => {
    expect((await verifyAt(1_777_749_815 + 59)).result.valid).toBe(true);
  });

  it("is AUDIENCE_MISMATCH for another verifier", async () => {
    expect((await verifyAt(1_777_700_000, "other.example")).result.error_code).toBe("AUDIENCE_MISMATCH");
  });

  it("its signature verifies with the PEM public key alone", async () => {
    const [h, p] = credential().split(".");
    const pem = parsePublicKey(readFileSync(td("example-2026-01.public.pem"), "utf8"));
    const { verifyDerSignature, decodeBase64Url } = await import("../../src/identity/index.js");
    const sig = decodeBase64Url(credential().split(".")[2] as string);
    expect(sig?.length).toBe(71);
    expect(verifyDerSignature(pem, `${h}.${p}`, sig as Buffer)).toBe(true);
  });

  it("discovery.json validates for example.com and its key decodes", () => {
    const d = validateDiscovery(discovery(), "example.com");
    if (!d.ok) throw new Error(d.message);
    expect(publicKeyOfJwk(d.value.public_keys[0] as never)).not.toBeNull();
  });
});

describe("AgentPin vectors: the specification's examples", () => {
  const ex = readVectorJson("agentpin", "extracted", "spec_examples.json") as Record<
    string,
    Record<string, unknown>
  >;
  const doc = (k: string) => ex[k]?.document;

  it("the §4.7 maker document validates for anthropic.com and its key (RFC 7515 A.3) decodes", () => {
    const d = validateDiscovery(doc("discovery_maker_example"), "anthropic.com");
    if (!d.ok) throw new Error(d.message);
    expect(publicKeyOfJwk(d.value.public_keys[0] as never)).not.toBeNull();
  });

  it("the §4.7 deployer document validates, but its placeholder key does not decode", () => {
    const d = validateDiscovery(doc("discovery_deployer_example"), "tarnover.com");
    if (!d.ok) throw new Error(d.message);
    expect(publicKeyOfJwk(d.value.public_keys[0] as never)).toBeNull();
  });

  it("the §5.8 credential's header and claims parse (signed here with a fresh key; its kid is not in the deployer document's usable keys)", async () => {
    const { generateKeyPair } = await import("../../src/crypto/index.js");
    const { signCredential, parseCredential } = await import("../../src/identity/index.js");
    const c = ex.credential_example_unsigned as { header: { kid: string }; payload: never };
    const token = signCredential(generateKeyPair("p256").privateKey, c.header.kid, c.payload);
    const parsed = parseCredential(token);
    expect(parsed.ok).toBe(true);
    const v = await verifyCredential(token, {
      source: new StaticSource([doc("discovery_deployer_example")]),
      pins: new KeyPinStore(),
      now: 1_738_301_000,
    });
    expect(v.result.error_code).toBe("KEY_NOT_FOUND");
  });
});

describe("AgentPin vectors: keys", () => {
  const jwk = readVectorJson(...TD, "example-2026-01.public.jwk.json") as never;

  it("reproduces the pin hash of the JWK", () => {
    expect(pinHashOf(jwk)).toBe("07aba469d9b8f559a9a267df7d245920f1319c41d5d64e8e64ffd54e1dd425ba");
  });

  it("reproduces the SDK key id (sha256 of the SPKI DER) from the PEM, the JWK and the private key", () => {
    const id = "d955c36f3657abeefeea38baa6c164f82c6788346979fba8ce2282516bba8068";
    expect(spkiKeyIdOf(parsePublicKey(readFileSync(td("example-2026-01.public.pem"), "utf8")))).toBe(id);
    expect(spkiKeyIdOf(publicKeyOfJwk(jwk) as never)).toBe(id);
    expect(spkiKeyIdOf(parsePrivateKey(readFileSync(td("example-2026-01.private.pem"), "utf8")))).toBe(id);
  });

  it("the JWK file equals public_keys[0] of discovery.json", () => {
    expect((discovery() as { public_keys: unknown[] }).public_keys[0]).toEqual(jwk);
  });
});

describe("AgentPin vectors: extracted unit cases", () => {
  it.each(group<Match>("capability_matches"))("matches($declared, $requested) = $expect", (c) => {
    expect(capabilityMatches(c.declared, c.requested)).toBe(c.expect);
  });
  it.each(group<Subset>("capabilities_subset"))("subset($declared ⊇ $requested) = $expect", (c) => {
    expect(capabilitiesSubset(c.declared, c.requested)).toBe(c.expect);
  });
  it.each(group<{ capabilities: string[]; sha256_hex: string }>("capabilities_hash", "computed"))(
    "capabilities hash of $canonical_json",
    (c) => {
      expect(capabilitiesHash(c.capabilities)).toBe(c.sha256_hex);
    },
  );
  it.each(group<{ capability: string; valid: boolean }>("validate_capability_taxonomy_v0_3"))(
    "taxonomy($capability) valid=$valid",
    (c) => {
      expect(capabilityProblem(c.capability) === null).toBe(c.valid);
    },
  );
  it.each(group<{ input: string; per_hour: number | null }>("parse_rate_limit_per_hour"))(
    "rate $input per hour = $per_hour",
    (c) => {
      expect(rateLimitPerHour(c.input)).toBe(c.per_hour);
    },
  );
  it.each(group<{ pattern: string; domain: string; expect: boolean }>("domain_pattern_matches"))(
    "pattern $pattern matches $domain = $expect",
    (c) => {
      expect(domainPatternMatches(c.pattern, c.domain)).toBe(c.expect);
    },
  );
  it.each(group<{ discovery: never; credential: never; expect: boolean }>("constraints_subset_of"))(
    "constraints subset case %#",
    (c) => {
      expect(constraintsSubsetOf(c.discovery, c.credential)).toBe(c.expect);
    },
  );
  it.each(
    group<{ chain_len: number; max_depths: number[]; ok: boolean; error_code_if_not_ok: string }>(
      "delegation_chain_depth",
    ),
  )("chain of $chain_len under $max_depths", async (c) => {
    const v = await chainOfDepth(c.chain_len, c.max_depths);
    expect(v.result.valid).toBe(c.ok);
    if (!c.ok) expect(v.result.error_code).toBe(c.error_code_if_not_ok);
  });
  it.each(group<{ input: string; verify_error_code: string }>("jwt_structural_reject"))(
    "rejects $input as $verify_error_code",
    async (c) => {
      const v = await verifyCredential(c.input, {
        source: new StaticSource([discovery()]),
        pins: new KeyPinStore(),
        now: 1_777_700_000,
      });
      expect(v.result.error_code).toBe(c.verify_error_code);
    },
  );
  it.each(group<{ input: string; parsed?: object; error?: boolean }>("dns_txt_parse_v0_3"))(
    "DNS TXT $input",
    (c) => {
      const r = parseDnsTxt(c.input);
      if (c.error === true) expect(r.ok).toBe(false);
      else expect(r).toEqual({ ok: true, value: c.parsed });
    },
  );
  it.each(group<{ domain: string; name: string }>("dns_txt_parse_v0_3", "record_name"))(
    "DNS TXT name of $domain",
    (c) => expect(dnsTxtName(c.domain)).toBe(c.name),
  );
  it.each(group<{ input: unknown; output: string }>("a2a_canonicalize_for_signing_v0_3"))(
    "A2A canonical JSON case %#",
    (c) => expect(canonicalJson(c.input)).toBe(c.output),
  );
  it("sha256 known answer", async () => {
    const { createHash } = await import("node:crypto");
    const k = unitCases.sha256_known_answer as { input_utf8: string; sha256_hex: string };
    expect(createHash("sha256").update(k.input_utf8).digest("hex")).toBe(k.sha256_hex);
  });
});

/** A real signed chain of `len` links whose entities declare `maxDepths` (issuer first). */
async function chainOfDepth(len: number, maxDepths: number[]) {
  const { generateKeyPair } = await import("../../src/crypto/index.js");
  const { buildDiscoveryDocument, createAttestation, issueCredential } = await import(
    "../../src/identity/index.js"
  );
  const caps = ["read:data"];
  const now = 1_800_000_000;
  const entity = (i: number) => ({
    domain: `e${i}.example`,
    key: generateKeyPair("p256"),
    agent: `urn:agentpin:e${i}.example:a`,
  });
  const issuer = entity(0);
  const links = Array.from({ length: len }, (_, i) => entity(i + 1));
  const docs = [issuer, ...links].map((e, i) =>
    buildDiscoveryDocument({
      domain: e.domain,
      key: e.key.privateKey,
      kid: "k",
      agents: [{ agent_id: e.agent, name: "a", capabilities: caps, status: "active" }],
      maxDelegationDepth: maxDepths[Math.min(i, maxDepths.length - 1)] as number,
      updatedAt: "2026-01-01T00:00:00Z",
    }),
  );
  const chain = links.map((e, i) => {
    const next = links[i + 1] ?? issuer;
    return createAttestation(
      e.key.privateKey,
      { domain: e.domain, role: i === 0 ? "maker" : "deployer", agent_id: e.agent, kid: "k" },
      { domain: next.domain, agentId: next.agent },
      caps,
    );
  });
  const token = issueCredential({
    privateKey: issuer.key.privateKey,
    kid: "k",
    issuer: issuer.domain,
    agentId: issuer.agent,
    capabilities: caps,
    ttlSeconds: 600,
    now,
    delegationChain: chain,
  });
  return verifyCredential(token, { source: new StaticSource(docs), pins: new KeyPinStore(), now });
}
