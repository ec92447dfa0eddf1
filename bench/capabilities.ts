import { MemoryBudgetLedger } from "../src/context/index.js";
import { generateKeyPair, verify } from "../src/crypto/index.js";
import { CapabilityService } from "../src/identity/capabilities/index.js";
import { type DelegationLink, issueLink, verifyChain } from "../src/identity/delegation/index.js";
import { measure, measureAsync, table } from "./_stats.js";

const N = 20_000;
const signer = generateKeyPair("ed25519");
const service = new CapabilityService({ signer, ledger: new MemoryBudgetLedger(), runOpen: () => true });
const grant = {
  scope: { tool: "mailer" },
  constraints: { to: { pattern: "^[a-z]+@example\\.com$" }, count: { lte: 3 } },
  maxUses: 1_000_000,
  ttlMs: 3_600_000,
};
const cap = service.issue("bench-run", "bench-agent", grant);
const [h, p, s] = cap.token.split(".") as [string, string, string];
const input = Buffer.from(`${h}.${p}`, "ascii");
const sig = Buffer.from(s, "base64url");
const call = {
  token: cap.token,
  runId: "bench-run",
  principalId: "bench-agent",
  toolClass: "http",
  action: "post",
  tool: "mailer",
  parameters: { to: "bob@example.com", count: 1 },
  now: Date.now(),
};

const baseline = measure("ed25519 verify of the token (baseline)", N, () =>
  verify(signer.publicKey, input, sig),
);
const rows = [
  baseline,
  await measureAsync("capability check + use (verify, scope, constraints, ledger)", N, async () => {
    const r = await service.check(call);
    if (!r.ok) throw new Error(r.code);
  }),
  measure("capability issue (sign)", 5000, () => service.issue("bench-run", "bench-agent", grant)),
];

const keys = [
  generateKeyPair("ed25519"),
  generateKeyPair("ed25519"),
  generateKeyPair("ed25519"),
  generateKeyPair("ed25519"),
];
const exp = Math.floor(Date.now() / 1000) + 3600;
const chain: DelegationLink[] = [];
let prev: DelegationLink | undefined;
for (let i = 0; i < 3; i++) {
  const link = issueLink({
    delegator: { id: `p${i}`, key: keys[i]! },
    delegate: { id: `p${i + 1}`, publicKey: keys[i + 1]!.publicKey },
    grant: { tools: ["http:get"], budgets: { toolCalls: 10 - i }, dataClasses: ["public"], expiresAt: exp },
    ...(prev !== undefined ? { prev } : {}),
  });
  chain.push(link);
  prev = link;
}
const now = Math.floor(Date.now() / 1000);
rows.push(
  measure("delegation chain verify (3 links)", 2000, () => {
    if (!verifyChain(chain, { roots: [keys[0]!.publicKey], now }).ok) throw new Error("chain");
  }),
);
process.stdout.write(table(rows, baseline));
