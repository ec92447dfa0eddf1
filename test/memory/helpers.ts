// A composed runtime (real Gate, journal, session store) with the memory contracts wired
// in and a memory firewall over it; the clock is injected so "a week later" is a number.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateKeyPair, type KeyPair } from "../../src/crypto/index.js";
import {
  type MemoryConfigInput,
  MemoryFirewall,
  memoryClassify,
  withMemoryContracts,
} from "../../src/memory/index.js";
import { composeRuntime, type Runtime } from "../../src/runtime/index.js";
import { classifyContract } from "../../src/tools/index.js";

// Memory operations are allowed; data leaving over HTTP is allowed unless the call carries
// web taint (the classic exfiltration guard); reading the web is allowed.
export const MEMORY_POLICY = `
rules:
  - { id: deny-tainted-egress, name: e, priority: 10, match: { toolClass: http, action: post, taintSources: [web] }, decision: deny, reason: web-tainted data may not leave, reasonCode: TAINTED_EGRESS }
  - { id: memory, name: m, priority: 100, match: { toolClass: memory }, decision: allow, reason: memory }
  - { id: web-read, name: w, priority: 100, match: { toolClass: http, action: get }, decision: allow, reason: read }
  - { id: egress, name: p, priority: 200, match: { toolClass: http, action: post }, decision: allow, reason: post }
`;

export const DAY = 86_400_000;

export interface MemoryDeployment {
  rt: Runtime;
  signer: KeyPair;
  memory: MemoryFirewall;
  dir: string;
  now: { t: number };
  close(): Promise<void>;
}

export async function deployment(
  memory: Partial<MemoryConfigInput> = {},
  policy = MEMORY_POLICY,
): Promise<MemoryDeployment> {
  const dir = mkdtempSync(join(tmpdir(), "warden-mem-"));
  const policyFile = join(dir, "policy.yaml");
  writeFileSync(policyFile, policy);
  const now = { t: Date.parse("2026-01-05T10:00:00Z") };
  const signer = generateKeyPair("ed25519");
  const rt = await composeRuntime(
    {
      policy: [policyFile],
      journal: { path: join(dir, "journal.db"), signer },
      gate: {
        principals: {
          alice: { id: "alice", roles: ["agent"] },
          bob: { id: "bob", roles: ["agent"] },
        },
        runs: "runtime",
        contractLookup: (reg) => withMemoryContracts(reg),
        classify: memoryClassify(classifyContract),
      },
    },
    { clock: () => now.t },
  );
  const fw = MemoryFirewall.open(rt, { path: join(dir, "journal.db.memory.db"), ...memory });
  return {
    rt,
    signer,
    memory: fw,
    dir,
    now,
    async close() {
      fw.close();
      await rt.close();
    },
  };
}
