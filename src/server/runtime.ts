// Wiring from a sidecar configuration to live objects: the journal key, the policy
// bundle, the contract registry, the SQLite journal, the Gate with its session store,
// approval and deferral queues, and the executors behind their circuit breakers.
// `checkSidecarConfig` does the same loading without opening anything for writing, and
// reports every problem it finds instead of stopping at the first.

import { accessSync, constants, existsSync, readFileSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import {
  BrowserKeyStore,
  browserKeyPath,
  type ConsoleKeyStore,
  SharedBrowserKeyStore,
} from "../console/index.js";
import type { Session, SessionStore, StartRunOptions } from "../context/index.js";
import { WardenError } from "../contracts/index.js";
import type { KeyPair } from "../crypto/index.js";
import { openRecorder, pinBundle } from "../evidence/index.js";
import type { BreakerRegistry } from "../executors/index.js";
import type { Gate, GatePolicy, InProcessApprovals } from "../gate/index.js";
import {
  ApproverKeyring,
  type Journal,
  type JournalStore,
  nextKeyId,
  openEmbeddedStore,
} from "../journal/index.js";
import { MemoryFirewall, memoryClassify, withMemoryContracts } from "../memory/index.js";
import { loadPolicyBundle } from "../policy/index.js";
import {
  type AgentPinAuthenticator,
  type ApaeSummary,
  behaviorFacts,
  composeRuntime,
  contractProfileGaps,
  profileGaps,
  type Runtime,
  type RuntimeApae,
  type RuntimeConfig,
  type RuntimeExecutorsConfig,
  type RuntimeMessaging,
  type RuntimeMessagingConfig,
  refuseUnmetProfile,
  summarizeApae,
} from "../runtime/index.js";
import { openPgNode, type PgNodeConfig } from "../store-pg/index.js";
import {
  type CompiledTool,
  type ContractRegistry,
  loadContractsTrusted,
  PinStore,
  TrustStore,
  type TrustSummary,
} from "../tools/index.js";
import {
  type JournalSignatureMode,
  type LoadedSidecarConfig,
  refuseLocalSourcePins,
  type SidecarConfig,
} from "./config.js";
import { ToolRunner } from "./execute.js";
import { classifyRoute } from "./execute-routes.js";
import { checkExecutors, executorDeclarations, sidecarExecutorMedia } from "./executors-config.js";
import { loadJournalKey } from "./journal-key.js";
import { notificationsRuntimeConfig } from "./notifications-config.js";
import { sandboxOptions } from "./sandbox-config.js";
import { driftTrackerOf, type RunningTelemetry, startTelemetry } from "./telemetry-config.js";

export interface SidecarRuntime {
  readonly loaded: LoadedSidecarConfig;
  readonly gate: Gate;
  readonly approvals: InProcessApprovals;
  readonly journal: Journal;
  readonly store: JournalStore;
  readonly signer: KeyPair;
  readonly policy: GatePolicy;
  readonly contracts: ContractRegistry | undefined;
  readonly runner: ToolRunner;
  readonly breakers: BreakerRegistry;
  /** Runs and principal state (quarantine persisted beside the journal). */
  readonly sessions: SessionStore;
  readonly trust: TrustStore;
  /** The communication gate and the messaging identities. */
  readonly messages: RuntimeMessaging;
  /** AgentPin credentials as agent principals (config `identity.agentpin`). */
  readonly agentpin: AgentPinAuthenticator | undefined;
  /** APAE trust when the configuration has an `apae:` section. */
  readonly apae: RuntimeApae | undefined;
  /** The memory firewall (config `memory:`; routes/memory.ts), or undefined when off. */
  readonly memory: MemoryFirewall | undefined;
  /** The composed runtime itself (the AARTS hooks engine runs over it: routes/hooks.ts). */
  readonly composed: Runtime;
  /**
   * With the console on: the approval queue's keyring (configured and browser-registered
   * approver keys; every step-up verdict must then be signed) and the browser key store.
   */
  readonly approverKeys: ApproverKeyring | undefined;
  readonly consoleKeys: ConsoleKeyStore | undefined;
  /** Starts a run bound to the authenticated principal. */
  startRun(principalId: string, options?: StartRunOptions): Promise<Session>;
  /** Distributed mode: the run is servable here, adopted, or ERR_RUN_ELSEWHERE (Runtime.ensureRun). */
  ensureRun: Runtime["ensureRun"];
  /** The same for operators' routes, which name a run without its principal. */
  ensureRunAny: Runtime["ensureRunAny"];
  /** The operators' step-up queue (every replica's in distributed mode; Runtime.approvalQueue). */
  readonly approvalQueue: Runtime["approvalQueue"];
  /** The operators' deferred actions (every replica's in distributed mode; Runtime.deferredQueue). */
  readonly deferredQueue: Runtime["deferredQueue"];
  /** Issues a capability token for an open run, journaled (see Runtime.grant). */
  grant: Runtime["grant"];
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

/** The executors the sidecar configuration names, as the composition root builds them. */
function executorsConfig(e: LoadedSidecarConfig["config"]["executors"]): RuntimeExecutorsConfig {
  const p = e.process;
  return {
    ...sidecarExecutorMedia(e),
    ...(e.http ? { http: e.http } : {}),
    ...(p
      ? {
          process: {
            workDir: p.workDir,
            maxTimeoutMs: p.maxTimeoutMs,
            ...(p.trustedPrefixes !== undefined ? { trustedPrefixes: p.trustedPrefixes } : {}),
            ...(p.sandbox !== undefined ? { sandbox: sandboxOptions(p.sandbox) } : {}),
          },
        }
      : {}),
  };
}

/** The sidecar configuration as the composition root takes it. */
export function sidecarRuntimeConfig(loaded: LoadedSidecarConfig, signer: KeyPair): RuntimeConfig {
  const c = loaded.config;
  const g = loaded.gate;
  const routeClassify = (tool: CompiledTool) => classifyRoute(tool, executorDeclarations(c.executors));
  return {
    policy: c.policies,
    ...(c.shadow !== undefined
      ? {
          shadow: {
            policy: c.shadow.policies,
            ...(c.shadow.maxQueue !== undefined ? { maxQueue: c.shadow.maxQueue } : {}),
          },
        }
      : {}),
    ...(c.notifications !== undefined ? { notifications: notificationsRuntimeConfig(c.notifications) } : {}),
    ...(c.contracts !== undefined
      ? { contracts: { dir: c.contracts, trust: c.trust, baseDir: loaded.baseDir, refuseRejected: true } }
      : {}),
    journal: {
      path: c.journal.path,
      signer,
      signatureMode: c.journal.signatures,
      signingWorkers: c.journal.signingWorkers,
      busyTimeoutMs: c.journal.busyTimeoutMs,
    },
    gate: {
      principals: g.principals,
      ...(g.context !== undefined ? { context: g.context } : {}),
      tenantId: g.config.tenant,
      environment: g.config.environment,
      requireContract: g.config.requireContract,
      // The sidecar creates runs (POST /v1/runs); a run id it did not create is refused.
      runs: g.config.runs ?? "runtime",
      approvals: g.config.approvals,
      outputScreening: g.config.outputScreening,
      // file/database contracts are classified by the medium they run in (execute-routes.ts);
      // the memory operations are contracts the Gate knows when the firewall is on.
      classify: c.memory !== undefined ? memoryClassify(routeClassify) : routeClassify,
      ...(c.memory !== undefined ? { contractLookup: withMemoryContracts } : {}),
      ...(c.drift !== undefined ? { drift: driftTrackerOf(c.drift) } : {}),
    },
    ...(c.executors.breaker !== undefined ? { breaker: c.executors.breaker } : {}),
    executors: executorsConfig(c.executors),
    ...(c.messaging !== undefined ? { messaging: messagingConfig(c.messaging) } : {}),
    ...(c.auth.approvers.some((a) => a.publicKeys !== undefined)
      ? { approvers: Object.fromEntries(c.auth.approvers.map((a) => [a.id, a.publicKeys ?? []])) }
      : {}),
    ...(c.identity !== undefined ? { identity: { agentpin: c.identity.agentpin } } : {}),
    ...(loaded.apae !== undefined ? { apae: loaded.apae } : {}),
    ...(c.store !== undefined ? { store: storeConfig(c.store) } : {}),
  };
}

/** The `store:` section as src/store-pg takes it (optional members only when set). */
function storeConfig(s: NonNullable<SidecarConfig["store"]>): PgNodeConfig {
  return {
    kind: s.kind,
    url: s.url,
    ...(s.node !== undefined ? { node: s.node } : {}),
    ...(s.pool !== undefined ? { pool: definedOnly(s.pool) } : {}),
    ...(s.tls !== undefined ? { tls: definedOnly(s.tls) } : {}),
    ...(s.runs !== undefined ? { runs: definedOnly(s.runs) } : {}),
    ...(s.approvalPollMs !== undefined ? { approvalPollMs: s.approvalPollMs } : {}),
    ...(s.journal !== undefined ? { journal: definedOnly(s.journal) } : {}),
  };
}

function messagingConfig(m: NonNullable<SidecarConfig["messaging"]>): RuntimeMessagingConfig {
  return {
    identities: m.identities,
    ...(m.maxDepth !== undefined ? { maxDepth: m.maxDepth } : {}),
    ...(m.inbox !== undefined ? { inbox: definedOnly(m.inbox) } : {}),
  };
}

function definedOnly<T extends object>(o: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as never;
}

/** Distributed mode: the console's browser keys from the shared store, followed on every replica. */
async function openSharedKeys(
  rt: Runtime,
  ring: ApproverKeyring,
  c: LoadedSidecarConfig["config"],
): Promise<ConsoleKeyStore | undefined> {
  const shared = rt.sharedConsoleKeys;
  if (shared === undefined) return undefined;
  try {
    const max = c.console.maxKeysPerApprover;
    // Keys this node registered before distributed mode (its key file) are carried over.
    const carry = BrowserKeyStore.open(browserKeyPath(c.journal.path), max).list();
    const keys = await SharedBrowserKeyStore.open(shared.rows, ring, max, { pollMs: shared.pollMs, carry });
    await shared.listen(() => void keys.sync().catch(() => undefined));
    return keys;
  } catch (err) {
    await rt.close();
    throw err;
  }
}

/** Opens everything the configuration names. Throws on the first problem (nothing is left open). */
export async function openSidecarRuntime(
  loaded: LoadedSidecarConfig,
  overrides: RuntimeOverrides = {},
): Promise<SidecarRuntime> {
  const c = loaded.config;
  // A configuration error is refused before the shared store is connected to.
  if (c.store !== undefined) refuseLocalSourcePins(c.hooks.sourcePins);
  const signer = loadJournalKey(loaded);
  // The replay recorder (docs/evidence.md): snapshots and the pinned bundle beside a file journal.
  const recorder = c.journal.path === ":memory:" ? undefined : openRecorder(c.journal.path);
  // The console's browser keys verify signed approvals like configured ones (docs/console.md):
  // this node's file, or in distributed mode the shared store (loaded once the runtime is open).
  const approverKeys = c.console.enabled ? new ApproverKeyring() : undefined;
  let consoleKeys: ConsoleKeyStore | undefined =
    c.console.enabled && c.store === undefined
      ? BrowserKeyStore.open(browserKeyPath(c.journal.path), c.console.maxKeysPerApprover)
      : undefined;
  if (consoleKeys !== undefined && approverKeys !== undefined) consoleKeys.loadInto(approverKeys);
  const rt = await composeRuntime(sidecarRuntimeConfig(loaded, signer), {
    ...(approverKeys ? { approverKeys } : {}),
    ...(overrides.policy ? { policy: overrides.policy } : {}),
    ...(overrides.clock ? { clock: overrides.clock } : {}),
    ...(recorder ? { snapshots: recorder } : {}),
  });
  if (approverKeys !== undefined && consoleKeys === undefined)
    consoleKeys = await openSharedKeys(rt, approverKeys, c);
  if (recorder) {
    const sources = {
      policy: c.policies,
      contractsDir: c.contracts,
      gateConfigData: { ...c.gate, requireContract: loaded.gate.config.requireContract },
      trust: c.trust,
    };
    await pinBundle(rt.journal, recorder, sources, rt.policy.policyBundleHash).catch(async (err) => {
      await rt.close();
      throw err;
    });
  }
  if (rt.apae !== undefined && loaded.apae !== undefined) {
    // A Regulated deployment missing a required mechanism does not start.
    try {
      const gaps = profileGaps(
        rt.apae.profile,
        loaded.apae,
        rt.policy,
        c.auth.approvers.length,
        behaviorFacts(loaded.apae),
      );
      refuseUnmetProfile(rt.apae.profile, gaps);
    } catch (err) {
      await rt.close();
      throw err;
    }
  }
  let memory: MemoryFirewall | undefined;
  let telemetry: RunningTelemetry;
  try {
    memory = c.memory === undefined ? undefined : MemoryFirewall.open(rt, c.memory);
    telemetry = await startTelemetry(c.telemetry, rt.store);
  } catch (err) {
    memory?.close();
    await rt.close();
    throw err;
  }
  const processEnv = c.executors.process?.env;
  const runner = new ToolRunner({
    executors: rt.executors,
    declarations: executorDeclarations(c.executors),
    ...(processEnv !== undefined ? { processEnv } : {}),
  });
  return {
    loaded,
    gate: rt.gate,
    approvals: rt.approvals,
    approvalQueue: rt.approvalQueue,
    deferredQueue: rt.deferredQueue,
    journal: rt.journal,
    store: rt.store,
    signer,
    policy: rt.policy,
    contracts: rt.contracts,
    runner,
    breakers: rt.breakers,
    sessions: rt.sessions,
    trust: rt.trust,
    messages: rt.messages,
    agentpin: rt.agentpin,
    apae: rt.apae,
    composed: rt,
    approverKeys,
    consoleKeys,
    startRun: (principalId, options) => rt.startRun(principalId, options),
    ensureRun: (runId, principalId) => rt.ensureRun(runId, principalId),
    ensureRunAny: (runId) => rt.ensureRunAny(runId),
    grant: (runId, grant, grantedBy) => rt.grant(runId, grant, grantedBy),
    memory,
    close: async () => {
      // The sink's last delivery reads the journal, so it stops first; the tracer last.
      await telemetry.stopSink().catch(() => undefined);
      memory?.close();
      consoleKeys?.close?.();
      try {
        await rt.close();
      } finally {
        await telemetry.stopTracing().catch(() => undefined);
      }
    },
  };
}

function checkContracts(dir: string, trust: TrustStore): ContractRegistry {
  const { registry } = loadContractsTrusted(dir, trust);
  const r = registry.rejected[0];
  if (r !== undefined) {
    throw new Error(
      `${registry.rejected.length} contract(s) rejected; first: ${r.file}: ${r.code}: ${r.message}`,
    );
  }
  return registry;
}

function pinSummary(loaded: LoadedSidecarConfig): TrustSummary["pins"] {
  const t = loaded.config.trust;
  const policy = t?.pin_policy ?? "tofu";
  if (t?.pins === undefined) return { path: null, entries: 0, policy };
  const path = resolve(loaded.baseDir, t.pins);
  if (!existsSync(path)) return { path, entries: 0, policy };
  return { path, entries: PinStore.open(path).entries().length, policy };
}

/** `--check` with `store:`: the TOFU pin files a replica refuses there (the pins are shared). */
function localPinFiles(c: SidecarConfig): CheckProblem[] {
  const why = "a node-local file: with store.kind postgres the pins are shared in the database";
  const files: [string, unknown][] = [
    ["trust.pins", c.trust?.pins],
    ["hooks.sourcePins", c.hooks.sourcePins],
  ];
  return files.filter(([, v]) => v !== undefined).map(([what]) => ({ what, message: why }));
}

/** `--check` with `store:`: the database answers, its schema is this Warden's, the chain's key is ours. */
async function checkStore(
  config: PgNodeConfig,
  keyId: string | undefined,
  problems: CheckProblem[],
  summary: CheckReport["summary"],
): Promise<void> {
  summary.journal = `postgres (${config.url.startsWith("env:") ? config.url : "store.url"})`;
  let node: Awaited<ReturnType<typeof openPgNode>> | undefined;
  try {
    node = await openPgNode(config);
    const last = await node.journal.last();
    summary.journalEntries = await node.journal.count();
    const expected = nextKeyId(last);
    if (keyId !== undefined && expected !== null && expected !== keyId)
      problems.push({
        what: "journal.key",
        message: `the journal's chain is signed by key ${expected}, not by ${keyId}`,
      });
  } catch (err) {
    problems.push({ what: "store", message: describe(err) });
  } finally {
    await node?.close();
  }
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
    /** The shadow bundle's hash (`shadow:`), when one is configured. */
    shadowBundleHash?: string;
    contracts: string[];
    principals: string[];
    approvers: string[];
    journal: string;
    /** How new entries will be signed (journal.signatures). */
    journalSignatures: JournalSignatureMode;
    journalEntries?: number;
    /** The contract trust store (`trust:`): mode, keys, pins, revocations. */
    trust?: TrustSummary;
    /** What the `apae:` section turns on; absent when APAE is off. */
    apae?: ApaeSummary;
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
  if (c.shadow !== undefined) {
    const shadow = attempt("shadow.policies", () => loadPolicyBundle(c.shadow?.policies ?? []));
    if (shadow) summary.shadowBundleHash = shadow.policyBundleHash;
  }
  // --check writes nothing: signatures are verified, pins are read elsewhere but not written here.
  const trust = attempt("trust", () =>
    TrustStore.fromConfig(c.trust === undefined ? undefined : { ...c.trust, pins: undefined }, {
      baseDir: loaded.baseDir,
    }),
  );
  if (trust) summary.trust = { ...trust.summary(), pins: pinSummary(loaded) };
  const apae = loaded.apae;
  const behavior = apae === undefined ? undefined : attempt("apae.behavior", () => behaviorFacts(apae));
  if (apae !== undefined) {
    summary.apae = summarizeApae(apae, c.journal.path);
    const profile = apae.profile ?? "standard";
    if (bundle && behavior) {
      const gaps = profileGaps(profile, apae, bundle, c.auth.approvers.length, behavior);
      summary.apae.gaps = gaps.map((g) => `${g.mechanism}: ${g.message}`);
      attempt("apae.profile", () => refuseUnmetProfile(profile, gaps));
    }
  }
  if (c.contracts !== undefined && trust) {
    const dir = c.contracts;
    const reg = attempt("contracts", () => checkContracts(dir, trust));
    if (reg) summary.contracts = reg.names();
    // The profile's contract requirements (provenance claims, checkpoints): what the start refuses.
    if (reg && apae !== undefined && summary.apae !== undefined && behavior !== undefined) {
      const gaps = contractProfileGaps(apae.profile ?? "standard", reg, behavior.verified);
      summary.apae.gaps = [...(summary.apae.gaps ?? []), ...gaps.map((g) => `${g.mechanism}: ${g.message}`)];
      attempt("apae.contracts", () => refuseUnmetProfile(apae.profile ?? "standard", gaps));
    }
    problems.push(...checkExecutors(c.executors, reg));
  } else problems.push(...checkExecutors(c.executors, undefined));
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
  if (c.store !== undefined) {
    problems.push(...localPinFiles(c));
    await checkStore(storeConfig(c.store), signer?.keyId, problems, summary);
  } else if (existsSync(c.journal.path)) {
    const store = attempt("journal.path", () => openEmbeddedStore(c.journal.path, { readonly: true }));
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
