// Wiring from a sidecar configuration to live objects: the journal key, the policy
// bundle, the contract registry, the SQLite journal, the Gate with its session store,
// approval and deferral queues, and the executors behind their circuit breakers.
// `checkSidecarConfig` does the same loading without opening anything for writing, and
// reports every problem it finds instead of stopping at the first.
import { accessSync, closeSync, constants, existsSync, openSync, readFileSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { createSessionStore } from "../context/index.js";
import { WardenError } from "../contracts/index.js";
import type { KeyPair } from "../crypto/index.js";
import {
  BreakerRegistry,
  journalBreakerTransitions,
  registerExecutorEventTypes,
} from "../executors/index.js";
import { DeferQueue, Gate, type GatePolicy, InProcessApprovals } from "../gate/index.js";
import {
  defaultEventTypes,
  type Journal,
  nextKeyId,
  openJournal,
  SqliteJournalStore,
} from "../journal/index.js";
import { loadPolicyBundle } from "../policy/index.js";
import { ContractRegistry } from "../tools/index.js";
import type { JournalSignatureMode, LoadedSidecarConfig } from "./config.js";
import { ToolRunner, type ToolRunnerOptions } from "./execute.js";
import { loadJournalKey } from "./journal-key.js";

export interface SidecarRuntime {
  readonly loaded: LoadedSidecarConfig;
  readonly gate: Gate;
  readonly approvals: InProcessApprovals;
  readonly journal: Journal;
  readonly store: SqliteJournalStore;
  readonly signer: KeyPair;
  readonly policy: GatePolicy;
  readonly contracts: ContractRegistry | undefined;
  readonly runner: ToolRunner;
  readonly breakers: BreakerRegistry;
  /** Waits for queued journal appends, then closes the store. Idempotent. */
  close(): Promise<void>;
}

export interface RuntimeOverrides {
  /** Replace the policy engine (fault-injection tests); default: the configured bundle. */
  policy?: GatePolicy;
  /** Gate clock (tests). */
  clock?: () => number;
}

function describe(err: unknown): string {
  if (err instanceof WardenError) return `${err.code}: ${err.message}`;
  const e = err as NodeJS.ErrnoException;
  return e.code !== undefined ? `${e.code}` : e instanceof Error ? e.message : String(err);
}

/**
 * A journal that does not exist yet is created empty with mode 0600 (SQLite gives its
 * -wal and -shm files the same mode), so the sidecar's journal is never world-readable.
 */
function createPrivateFile(path: string): void {
  try {
    closeSync(openSync(path, "wx", 0o600));
  } catch {
    // It exists (kept as it is), or it cannot be created: the store's open reports that.
  }
}

function loadContracts(dir: string | undefined): ContractRegistry | undefined {
  if (dir === undefined) return undefined;
  const registry = ContractRegistry.load(dir);
  if (registry.rejected.length > 0) {
    const r = registry.rejected[0]!;
    throw new Error(
      `${registry.rejected.length} contract(s) rejected; first: ${r.file}: ${r.code}: ${r.message}`,
    );
  }
  return registry;
}

function processOptions(
  p: NonNullable<LoadedSidecarConfig["config"]["executors"]["process"]>,
): Pick<ToolRunnerOptions, "process" | "processEnv"> {
  return {
    process: {
      workDir: p.workDir,
      maxTimeoutMs: p.maxTimeoutMs,
      ...(p.trustedPrefixes !== undefined ? { trustedPrefixes: p.trustedPrefixes } : {}),
    },
    ...(p.env !== undefined ? { processEnv: p.env } : {}),
  };
}

/** Opens everything the configuration names. Throws on the first problem (nothing is left open). */
export async function openSidecarRuntime(
  loaded: LoadedSidecarConfig,
  overrides: RuntimeOverrides = {},
): Promise<SidecarRuntime> {
  const c = loaded.config;
  registerExecutorEventTypes(defaultEventTypes);
  const signer = loadJournalKey(loaded);
  const policy: GatePolicy = overrides.policy ?? loadPolicyBundle(c.policies);
  const contracts = loadContracts(c.contracts);

  createPrivateFile(c.journal.path);
  const store = SqliteJournalStore.open(c.journal.path, { busyTimeoutMs: c.journal.busyTimeoutMs });
  let journal: Journal;
  try {
    journal = await openJournal({
      store,
      signer,
      signatureMode: c.journal.signatures,
      signingWorkers: c.journal.signingWorkers,
    });
  } catch (err) {
    await store.close();
    throw err;
  }

  const breakers = new BreakerRegistry(c.executors.breaker ?? {});
  const stopBreakerJournal = journalBreakerTransitions(breakers, journal);
  const gateCfg = loaded.gate.config;
  const deps = {
    journal,
    breakers,
    dare: {
      tenantId: gateCfg.tenant,
      environment: gateCfg.environment,
      policyBundleHash: policy.policyBundleHash,
    },
  };
  const runner = new ToolRunner({
    ...(c.executors.http ? { http: c.executors.http } : {}),
    ...(c.executors.process ? processOptions(c.executors.process) : {}),
    deps,
  });
  const approvals = new InProcessApprovals();
  const gate = new Gate({
    policy,
    journal,
    signer,
    principals: loaded.gate.principals,
    ...(contracts ? { contracts } : {}),
    requireContract: gateCfg.requireContract,
    sessions: createSessionStore(loaded.gate.context ?? {}),
    approvals,
    defer: new DeferQueue(gateCfg.approvals.maxDeferred, gateCfg.approvals.maxDeferredPerPrincipal),
    tenantId: gateCfg.tenant,
    environment: gateCfg.environment,
    ...(overrides.clock ? { clock: overrides.clock } : {}),
  });

  let closing: Promise<void> | undefined;
  return {
    loaded,
    gate,
    approvals,
    journal,
    store,
    signer,
    policy,
    contracts,
    runner,
    breakers,
    close() {
      closing ??= (async () => {
        stopBreakerJournal();
        try {
          await journal.close();
        } finally {
          await store.close();
        }
      })();
      return closing;
    },
  };
}

export interface CheckProblem {
  what: string;
  message: string;
}

export interface CheckReport {
  ok: boolean;
  problems: CheckProblem[];
  summary: {
    listen: string;
    policies: number;
    policyBundleHash?: string;
    contracts: string[];
    principals: string[];
    approvers: string[];
    journal: string;
    /** How new entries will be signed (journal.signatures). */
    journalSignatures: JournalSignatureMode;
    journalEntries?: number;
  };
}

/**
 * Validates a configuration without starting anything: files exist, the key loads and
 * matches the journal's chain, policies compile, every contract loads, TLS files read.
 */
export async function checkSidecarConfig(loaded: LoadedSidecarConfig): Promise<CheckReport> {
  const c = loaded.config;
  const problems: CheckProblem[] = [];
  const attempt = <T>(what: string, fn: () => T): T | undefined => {
    try {
      return fn();
    } catch (err) {
      problems.push({ what, message: describe(err) });
      return undefined;
    }
  };
  const summary: CheckReport["summary"] = {
    listen: `${c.tls ? "https" : "http"}://${c.host}:${c.port}`,
    policies: c.policies.length,
    contracts: [],
    principals: c.auth.principals.map((p) => p.id),
    approvers: c.auth.approvers.map((a) => a.id),
    journal: c.journal.path,
    journalSignatures: c.journal.signatures,
  };
  const signer = attempt("journal.key", () => loadJournalKey(loaded));
  const bundle = attempt("policies", () => loadPolicyBundle(c.policies));
  if (bundle) summary.policyBundleHash = bundle.policyBundleHash;
  if (c.contracts !== undefined) {
    const reg = attempt("contracts", () => loadContracts(c.contracts));
    if (reg) summary.contracts = reg.names();
  }
  if (c.tls) {
    attempt("tls.cert", () => readFileSync(c.tls!.cert));
    attempt("tls.key", () => readFileSync(c.tls!.key));
  }
  if (c.executors.process) {
    const dir = c.executors.process.workDir;
    attempt("executors.process.workDir", () => {
      if (!statSync(dir).isDirectory()) throw new Error(`${dir} is not a directory`);
    });
  }
  if (existsSync(c.journal.path)) {
    const store = attempt("journal.path", () => SqliteJournalStore.open(c.journal.path, { readonly: true }));
    if (store) {
      try {
        const last = await store.last();
        summary.journalEntries = await store.count();
        const expected = nextKeyId(last);
        if (signer && expected !== null && expected !== signer.keyId) {
          problems.push({
            what: "journal.key",
            message: `the journal's chain is signed by key ${expected}, not by ${signer.keyId}`,
          });
        }
      } catch (err) {
        problems.push({ what: "journal.path", message: describe(err) });
      } finally {
        await store.close();
      }
    }
    attempt("journal.path", () => accessSync(c.journal.path, constants.R_OK | constants.W_OK));
  } else {
    attempt("journal.path", () => accessSync(dirname(c.journal.path), constants.W_OK));
  }
  return { ok: problems.length === 0, problems, summary };
}
