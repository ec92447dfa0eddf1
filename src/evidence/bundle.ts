// The bundle that decided: the policy files, the contract directory, the gate
// configuration file and the contract trust section — everything model-free that the Gate
// consults — as one canonical JSON document. Its sha-256 is THE bundle hash: the document
// is stored once in the evidence store under it, and a `warden.evidence.bundle` entry
// binds it to the policy bundle hash every decision record carries (docs/evidence.md).
// A replay materializes the document into a private temp directory and opens a runtime
// over those files, never over the live ones.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { z } from "zod";
import { canonicalJson, EvidenceError, JsonValueSchema, parseStrictJson } from "../contracts/index.js";

export const BUNDLE_SCHEMA = "warden.bundle.v1";

const FileEntry = z.strictObject({ name: z.string().min(1).max(255), data_b64: z.string() });

export const DecisionBundle = z.strictObject({
  schema: z.literal(BUNDLE_SCHEMA),
  policies: z.array(FileEntry),
  contracts: z.array(FileEntry),
  gate_config: FileEntry.nullable(),
  trust: JsonValueSchema.nullable(),
});
export type DecisionBundle = z.infer<typeof DecisionBundle>;

/** Where the files that decide are. */
export interface BundleSources {
  policy: readonly string[];
  contractsDir?: string | undefined;
  gateConfig?: string | undefined;
  /** A gate configuration given as data rather than a file (the sidecar's `gate:` section); written as gate.json. */
  gateConfigData?: unknown;
  /** The contract trust section as configured (JSON), when any. */
  trust?: unknown;
}

function entry(path: string, name = basename(path)): z.infer<typeof FileEntry> {
  return { name, data_b64: readFileSync(path).toString("base64") };
}

/** The canonical bundle of the files as they are now. Unique names are required. */
export function collectBundle(s: BundleSources): DecisionBundle {
  const policies = s.policy.map((p, i) => entry(p, `${String(i).padStart(3, "0")}-${basename(p)}`));
  const contracts =
    s.contractsDir === undefined
      ? []
      : readdirSync(s.contractsDir)
          .sort()
          .filter((n) => statSync(join(s.contractsDir as string, n)).isFile())
          .map((n) => entry(join(s.contractsDir as string, n)));
  return DecisionBundle.parse({
    schema: BUNDLE_SCHEMA,
    policies,
    contracts,
    gate_config:
      s.gateConfig !== undefined
        ? entry(s.gateConfig)
        : s.gateConfigData !== undefined
          ? { name: "gate.json", data_b64: Buffer.from(canonicalJson(s.gateConfigData)).toString("base64") }
          : null,
    trust: s.trust === undefined ? null : JSON.parse(JSON.stringify(s.trust)),
  });
}

export function bundleBytes(b: DecisionBundle): Buffer {
  return Buffer.from(canonicalJson(b), "utf8");
}

export function parseBundle(bytes: Buffer): DecisionBundle {
  const r = DecisionBundle.safeParse(parseStrictJson(bytes.toString("utf8")));
  if (!r.success) throw new EvidenceError("ERR_EVIDENCE_BUNDLE_TAMPERED", "the pinned bundle is malformed");
  return r.data;
}

/** A bundle written out as files (policy paths, contracts dir, gate config) for a runtime to open. */
export interface MaterializedBundle {
  dir: string;
  policy: string[];
  contractsDir: string;
  gateConfig: string | undefined;
  trust: unknown;
}

export function materializeBundle(b: DecisionBundle): MaterializedBundle {
  for (const f of [...b.policies, ...b.contracts, ...(b.gate_config ? [b.gate_config] : [])])
    if (f.name.includes("/") || f.name.includes("\\") || f.name === "." || f.name === "..")
      throw new EvidenceError(
        "ERR_EVIDENCE_BUNDLE_TAMPERED",
        `bundle file name ${f.name} is not a plain name`,
      );
  const dir = mkdtempSync(join(tmpdir(), "warden-bundle-"));
  const write = (sub: string, f: z.infer<typeof FileEntry>): string => {
    const p = join(dir, sub, f.name);
    writeFileSync(p, Buffer.from(f.data_b64, "base64"), { mode: 0o600 });
    return p;
  };
  for (const sub of ["policy", "contracts", "config"]) mkdirSync(join(dir, sub), { mode: 0o700 });
  const policy = b.policies.map((f) => write("policy", f));
  for (const f of b.contracts) write("contracts", f);
  return {
    dir,
    policy,
    contractsDir: join(dir, "contracts"),
    gateConfig: b.gate_config === null ? undefined : write("config", b.gate_config),
    trust: b.trust ?? undefined,
  };
}

/** The bundle with its policies replaced (and its contracts, when a directory is given): what-if. */
export function withChanges(
  b: DecisionBundle,
  change: { policy?: readonly string[] | undefined; contractsDir?: string | undefined },
): DecisionBundle {
  const next = collectBundle({
    policy: change.policy ?? [],
    contractsDir: change.contractsDir,
  });
  return {
    ...b,
    ...(change.policy !== undefined ? { policies: next.policies } : {}),
    ...(change.contractsDir !== undefined ? { contracts: next.contracts } : {}),
  };
}
