// AgentPin credential verification per second, beside a same-run baseline of raw ES256
// JWT verification with jose (r||s) and with node:crypto (DER). "cold" runs every step of
// §6.1 on each call (documents validated, signature verified, pins checked); "warm
// resolver" serves the discovery document from the online resolver's max-age cache;
// "hot" is the runtime authenticator answering a credential it verified within its
// cache window (the sidecar's steady state for one agent).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compactVerify, importJWK, SignJWT } from "jose";
import { generateKeyPair, verify } from "../src/crypto/index.js";
import {
  buildDiscoveryDocument,
  issueCredential,
  KeyPinStore,
  OnlineResolver,
  StaticSource,
  verifyCredential,
} from "../src/identity/index.js";
import { AgentPinAuthenticator } from "../src/runtime/index.js";
import { measure, measureAsync, type Stats, table } from "./_stats.js";

const now = Math.floor(Date.now() / 1000);
const pair = generateKeyPair("p256");
const agent = "urn:agentpin:acme.example:bot";
const doc = buildDiscoveryDocument({
  domain: "acme.example",
  key: pair.privateKey,
  kid: "acme-1",
  agents: [{ agent_id: agent, name: "bot", capabilities: ["read:*", "write:report"], status: "active" }],
  updatedAt: new Date().toISOString(),
});
const token = issueCredential({
  privateKey: pair.privateKey,
  kid: "acme-1",
  issuer: "acme.example",
  agentId: agent,
  capabilities: ["read:data", "write:report"],
  ttlSeconds: 3600,
  now,
  audience: "warden.bench",
});

async function main(): Promise<void> {
  const N = 3000;
  const joseKey = await importJWK({ ...pair.publicKey.export({ format: "jwk" }), alg: "ES256" }, "ES256");
  const joseToken = await new SignJWT({ sub: agent, capabilities: ["read:data", "write:report"] })
    .setProtectedHeader({ alg: "ES256", kid: "acme-1" })
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .sign(await importJWK({ ...pair.privateKey.export({ format: "jwk" }), alg: "ES256" }, "ES256"));
  const baseline = await measureAsync("raw ES256 JWT verify, jose r||s (baseline)", N, () =>
    compactVerify(joseToken, joseKey),
  );
  const [h, p, s] = token.split(".") as [string, string, string];
  const der = Buffer.from(s, "base64url");
  const input = Buffer.from(`${h}.${p}`);
  const rows: Stats[] = [
    baseline,
    measure("raw ES256 verify, node:crypto DER", N, () => verify(pair.publicKey, input, der)),
  ];

  const offline = new StaticSource([doc]);
  rows.push(
    await measureAsync("AgentPin verify, cold (every step, documents validated)", N, () =>
      verifyCredential(token, { source: offline, pins: new KeyPinStore(), audience: "warden.bench", now }),
    ),
  );
  const wk = "https://acme.example/.well-known/agent-identity.json";
  const rev = { agentpin_version: "0.1", entity: "acme.example", updated_at: new Date().toISOString() };
  const online = new OnlineResolver({
    fetchJson: async (url) => ({ ok: true, body: url === wk ? doc : rev, maxAgeSeconds: 3600 }),
    now: () => now,
  });
  const pins = new KeyPinStore();
  rows.push(
    await measureAsync("AgentPin verify, warm resolver cache (pinned key)", N, () =>
      verifyCredential(token, { source: online, pins, audience: "warden.bench", now }),
    ),
  );
  const dir = mkdtempSync(join(tmpdir(), "warden-bench-identity-"));
  const bundle = join(dir, "bundle.json");
  writeFileSync(
    bundle,
    JSON.stringify({
      agentpin_bundle_version: "0.1",
      created_at: rev.updated_at,
      documents: [doc],
      revocations: [],
    }),
  );
  const auth = new AgentPinAuthenticator(
    { audience: "warden.bench", trustBundle: bundle, principals: { [agent]: "bench" } },
    { append: async () => ({}) as never },
    Date.now,
  );
  rows.push(
    await measureAsync("runtime authenticator, credential cache hot", N * 10, () => auth.authenticate(token)),
  );
  process.stdout.write(table(rows, baseline));
}

await main();
