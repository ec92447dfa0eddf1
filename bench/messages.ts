// Sealed inter-agent messages (src/messaging): seal and open per second for a 1 KB
// payload (X25519 agreement, HKDF-SHA256, AES-256-GCM, Ed25519 sign/verify, canonical
// header, nonce store), beside a same-run baseline of raw AES-256-GCM encrypt + decrypt
// of the same payload bytes with a fixed key. The gap is the price of the asymmetric
// steps (an ephemeral key agreement per message, one signature and its check).
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { canonicalBytes } from "../src/contracts/index.js";
import {
  generateMessagingKeys,
  IdentityDirectory,
  MemoryNonceStore,
  open,
  seal,
} from "../src/messaging/index.js";
import { measure, table } from "./_stats.js";

const payload = { task: "summarise the quarterly report", notes: "x".repeat(960) };
const bytes = canonicalBytes(payload);
const planner = generateMessagingKeys("planner");
const executor = generateMessagingKeys("executor");
const directory = new IdentityDirectory();
directory.register("planner", planner);
directory.register("executor", executor);
const nonces = new MemoryNonceStore(1_000_000);
const input = {
  recipient: "executor",
  primitive: "delegate",
  payloadType: "delegate_task",
  payload,
} as const;

const key = randomBytes(32);
const N = 5000;
const baseline = measure("raw AES-256-GCM encrypt+decrypt (baseline)", N, () => {
  const iv = randomBytes(12);
  const c = createCipheriv("aes-256-gcm", key, iv);
  const ct = Buffer.concat([c.update(bytes), c.final()]);
  const tag = c.getAuthTag();
  const d = createDecipheriv("aes-256-gcm", key, iv);
  d.setAuthTag(tag);
  Buffer.concat([d.update(ct), d.final()]);
});
const sealed = Array.from({ length: N + 1000 }, () => seal(input, planner, executor, Date.now()));
let next = 0;
const rows = [
  baseline,
  measure("seal (sign + encrypt)", 2000, () => seal(input, planner, executor, Date.now())),
  // The warmup calls fn too: a running index keeps every opened message fresh (no replay).
  measure("open (verify + decrypt + nonce)", N, () =>
    open(sealed[next++]!, executor, { directory, nonces, now: Date.now() }),
  ),
  measure("seal + open", 2000, () =>
    open(seal(input, planner, executor, Date.now()), executor, { directory, nonces, now: Date.now() }),
  ),
];
process.stdout.write(table(rows, baseline));
