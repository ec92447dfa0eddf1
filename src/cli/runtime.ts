// The governed runtime behind `warden run`, `warden exec` and the demo: one Gate (policy
// bundle, principals, session context, contracts), one signed SQLite journal, and the
// executors (HTTP, process, file) that redeem the Gate's tickets. It only wires the
// layers together; every decision, check and record still happens in its own layer.
// What it adds is routing (a ticket's tool name picks the executor and binding) and the
// model's view of an output (bytes parsed by the contract's output schema, Buffers as text).
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import type { ResourceUsage, Session, SessionStore, StartRunOptions } from "../context/index.js";
import { CliError, type TaintLabel } from "../contracts/index.js";
import {
  generateKeyPair,
  type KeyPair,
  Keyring,
  loadPrivateKeyFile,
  publicKeyInfo,
  saveKeyPair,
} from "../crypto/index.js";
import { openRecorder, pinBundle } from "../evidence/index.js";
import {
  bindingForContract,
  type EvidenceEnvelope,
  type ExecutionResult,
  type FileOutput,
  type HttpBinding,
  type HttpOutput,
  type ProcessBinding,
  type ProcessOutput,
} from "../executors/index.js";
import type { Approvals, ExecutionTicket, Gate } from "../gate/index.js";
import { type Journal, type JournalStore, type VerifyReport, verifyJournal } from "../journal/index.js";
import {
  type ContractSource,
  classifyContract,
  contractCatalog,
  type ExecutorPort,
  executorPort,
  type GovernedResult,
  type ToolCatalog,
  type ToolClassification,
} from "../loop/index.js";
import type { PolicyBundle } from "../policy/index.js";
import {
  type Runtime as ComposedRuntime,
  composeRuntime,
  type RuntimeApaeConfig,
  type RuntimeExecutors,
  type RuntimeGateConfig,
} from "../runtime/index.js";
import { type CompiledTool, type ContractRegistry, parseOutput } from "../tools/index.js";
import { BUILTIN_TOOL_NAMES, type BuiltinTool, builtinFileTools } from "./builtin-tools.js";
import { loadCliGateConfig } from "./gate-config.js";

export interface RuntimeOptions {
  /** Directory of `*.clad.toml` contracts. */
  contracts: string;
  /** Policy files (.yaml/.yml/.json rules, .cedar). */
  policy: readonly string[];
  /** Gate configuration (principals, context); without it `principal` has no roles and no restrictions. */
  config?: string;
  principal: string;
  /** SQLite journal (default: a new temp file). */
  db?: string;
  /** Ed25519 private key that signs the journal (default: `<db>.key.pem`, created when missing). */
  key?: string;
  /** Lets the HTTP executor reach loopback addresses (and nothing else that is private). */
  allowLoopback?: boolean;
  /** File executor root and process working directory (default: the current directory). */
  sandbox?: string;
  /** The replay recorder (response snapshots and the pinned bundle beside the journal); default on. */
  record?: boolean;
  /** The Gate's clock (replay runs it on the recorded times). */
  clock?: () => number;
}

/** An executed call as the CLI and the loop see it: the executor's result, output made model-readable. */
export type RuntimeResult =
  | {
      ok: true;
      output: unknown;
      evidence: EvidenceEnvelope;
      response?: unknown;
      taint: TaintLabel[];
      /** What the execution used (network, filesystem): the loop reports it with the result. */
      usage?: ResourceUsage;
    }
  | {
      ok: false;
      code: string;
      message: string;
      evidence?: EvidenceEnvelope;
      response?: unknown;
      output?: unknown;
      usage?: ResourceUsage;
    };

export interface JournalKeyInfo {
  keyId: string;
  publicKeyPem: string;
  /** Where the private key was written when the runtime generated it. */
  generatedAt?: string;
}

export interface Runtime {
  readonly gate: Gate;
  /** The approval queue step-ups and the AARTS host's asks wait in. */
  readonly approvals: Approvals;
  /** Runs and principal state (quarantine persisted beside the journal). */
  readonly sessions: SessionStore;
  readonly journal: Journal;
  readonly store: JournalStore;
  readonly policy: PolicyBundle;
  readonly principalId: string;
  readonly dbPath: string;
  readonly key: JournalKeyInfo;
  readonly sandbox: string;
  /** Contract manifests that were not registered, with the reason. */
  readonly rejectedContracts: readonly { file: string; code: string; message: string }[];
  /** The model's tools (contracts + built-in file tools) and the pre-Gate argument check. */
  readonly catalog: ToolCatalog;
  /** The loop's executor port over `execute`. */
  readonly executor: ExecutorPort<ExecutionTicket>;
  /** The Gate request class/action of a tool, or undefined for an unknown tool. */
  classify(tool: string): ToolClassification | undefined;
  /** Redeems a ticket with the executor that serves its tool. */
  execute(ticket: ExecutionTicket, options?: { signal?: AbortSignal }): Promise<RuntimeResult>;
  verify(): Promise<VerifyReport>;
  /** Starts a run bound to a principal (loads its persisted state first). */
  startRun(principalId: string, options?: StartRunOptions): Promise<Session>;
  close(): Promise<void>;
}

export function journalKey(
  dbPath: string,
  keyFile: string | undefined,
): { pair: KeyPair; generatedAt?: string } {
  if (keyFile !== undefined) {
    const pair = loadPrivateKeyFile(keyFile);
    if (pair.type !== "ed25519") throw new CliError("ERR_CLI_INPUT", "--key must be an Ed25519 private key");
    return { pair };
  }
  const name = `${basename(dbPath)}.key`;
  const beside = join(dirname(dbPath), `${name}.pem`);
  // A journal opened again keeps its key; a fresh one gets a fresh key written next to it (0600).
  if (existsSync(beside)) return { pair: loadPrivateKeyFile(beside) };
  const pair = generateKeyPair("ed25519");
  const files = saveKeyPair(pair, dirname(dbPath), { name });
  return { pair, generatedAt: files.privatePem };
}

function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** The model sees parsed, schema-checked output; a contract's output that does not parse is a failure. */
function contractView(
  tool: CompiledTool,
  r: ExecutionResult<HttpOutput> | ExecutionResult<ProcessOutput>,
): RuntimeResult {
  const raw = (o: HttpOutput | ProcessOutput): Buffer => ("body" in o ? o.body : o.stdout);
  if (!r.ok) {
    if (r.output === undefined) return r;
    const o = r.output;
    const text = decodeUtf8(raw(o)) ?? "(not UTF-8)";
    return {
      ...r,
      output:
        "status" in o
          ? { status: o.status, body: text }
          : { exitCode: o.exitCode, stderr: decodeUtf8(o.stderr) ?? "" },
    };
  }
  const parsed = parseOutput(tool, raw(r.output));
  const usage = r.usage !== undefined ? { usage: r.usage } : {};
  if (!parsed.ok) {
    return {
      ok: false,
      code: parsed.code,
      message: parsed.message,
      evidence: r.evidence,
      response: r.response,
      ...usage,
    };
  }
  return {
    ok: true,
    output: parsed.value,
    evidence: r.evidence,
    response: r.response,
    taint: r.taint,
    ...usage,
  };
}

function fileView(r: ExecutionResult<FileOutput>): RuntimeResult {
  if (!r.ok) {
    const { output: _dropped, ...rest } = r;
    return rest;
  }
  const o = r.output;
  let output: unknown;
  if (o.op === "read") {
    const text = decodeUtf8(o.content);
    if (text === undefined)
      return {
        ok: false,
        code: "ERR_TOOL_OUTPUT_PARSE",
        message: "file is not valid UTF-8",
        evidence: r.evidence,
      };
    output = text;
  } else if (o.op === "list") output = o.entries;
  else if (o.op === "write") output = { bytes: o.bytes, created: o.created };
  else output = { deleted: true };
  const usage = r.usage !== undefined ? { usage: r.usage } : {};
  return { ok: true, output, evidence: r.evidence, response: r.response, taint: r.taint, ...usage };
}

type Route =
  | { kind: "file"; builtin: BuiltinTool }
  | { kind: "http"; tool: CompiledTool; binding: HttpBinding }
  | { kind: "process"; tool: CompiledTool; binding: ProcessBinding }
  | { kind: "unsupported"; tool: CompiledTool; backend: string };

interface GateSetup {
  gate: RuntimeGateConfig;
  trust: unknown;
  baseDir: string | undefined;
  apae?: RuntimeApaeConfig;
}

/** Principals, context and deployment facts from `--config`, or one bare principal without it. */
function gateSetup(o: RuntimeOptions): GateSetup {
  if (o.config === undefined) {
    return {
      gate: { principals: { [o.principal]: { id: o.principal, roles: [] } }, requireContract: true },
      trust: undefined,
      baseDir: undefined,
    };
  }
  const { gate: loaded, trust, baseDir, apae } = loadCliGateConfig(o.config);
  if (!Object.hasOwn(loaded.principals, o.principal))
    throw new CliError("ERR_CLI_USAGE", `principal ${o.principal} is not declared in ${o.config}`);
  return {
    gate: {
      principals: loaded.principals,
      ...(loaded.context !== undefined ? { context: loaded.context } : {}),
      tenantId: loaded.config.tenant,
      environment: loaded.config.environment,
      requireContract: loaded.config.requireContract,
      approvals: loaded.config.approvals,
      outputScreening: loaded.config.outputScreening,
    },
    trust,
    baseDir,
    ...(apae !== undefined ? { apae } : {}),
  };
}

function journalPath(db: string | undefined): string {
  if (db === undefined) return join(mkdtempSync(join(tmpdir(), "warden-run-")), "journal.db");
  const path = resolve(db);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  return path;
}

/** Builds the runtime. Throws coded errors for bad configuration (exit 2 in the CLI). */
export async function openRuntime(o: RuntimeOptions): Promise<Runtime> {
  const builtins = builtinFileTools();
  const setup = gateSetup(o);
  const sandbox = resolve(o.sandbox ?? process.cwd());
  const dbPath = journalPath(o.db);
  const { pair, generatedAt } = journalKey(dbPath, o.key);
  const classify = (tool: CompiledTool): ToolClassification => {
    const b = builtins.get(tool.name);
    return b !== undefined && b.tool === tool ? { toolClass: "file", action: b.op } : classifyContract(tool);
  };
  let source: ContractSource | undefined;
  const recorder = o.record === false ? undefined : openRecorder(dbPath);
  const rt = await composeRuntime(
    {
      policy: o.policy,
      contracts: {
        dir: o.contracts,
        trust: setup.trust,
        ...(setup.baseDir !== undefined ? { baseDir: setup.baseDir } : {}),
      },
      journal: { path: dbPath, signer: pair },
      gate: {
        ...setup.gate,
        classify,
        contractLookup: (reg) => {
          source = contractSource(reg, builtins);
          return source;
        },
      },
      agentId: o.principal,
      ...(setup.apae !== undefined ? { apae: setup.apae } : {}),
      executors: {
        http: { allowLoopback: o.allowLoopback === true },
        process: { workDir: sandbox },
        file: { root: sandbox },
      },
    },
    { ...(recorder ? { snapshots: recorder } : {}), ...(o.clock ? { clock: o.clock } : {}) },
  );
  if (recorder) {
    const sources = { policy: o.policy, contractsDir: o.contracts, gateConfig: o.config, trust: setup.trust };
    await pinBundle(rt.journal, recorder, sources, rt.policy.policyBundleHash).catch(async (err) => {
      await rt.close();
      throw err;
    });
  }
  const registry = rt.contracts as ContractRegistry;
  if (source === undefined) throw new Error("the composition root did not ask for the contract lookup");
  return assemble(o, rt, { registry, source, builtins, classify, sandbox, dbPath, pair, generatedAt });
}

function contractSource(
  reg: ContractRegistry | undefined,
  builtins: Map<string, BuiltinTool>,
): ContractSource {
  for (const name of reg?.names() ?? []) {
    if (BUILTIN_TOOL_NAMES.includes(name))
      throw new CliError("ERR_CLI_INPUT", `contract ${name} reuses the name of a built-in tool`);
  }
  return {
    get: (name) => builtins.get(name)?.tool ?? reg?.get(name),
    names: () => [...(reg?.names() ?? []), ...builtins.keys()],
  };
}

interface Assembly {
  registry: ContractRegistry;
  source: ContractSource;
  builtins: Map<string, BuiltinTool>;
  classify: (tool: CompiledTool) => ToolClassification;
  sandbox: string;
  dbPath: string;
  pair: KeyPair;
  generatedAt: string | undefined;
}

function routeTable(registry: ContractRegistry, builtins: Map<string, BuiltinTool>): Map<string, Route> {
  const routes = new Map<string, Route>();
  for (const [name, builtin] of builtins) routes.set(name, { kind: "file", builtin });
  for (const name of registry.names()) {
    const tool = registry.get(name) as CompiledTool;
    const b = bindingForContract(tool);
    if (b.kind === "http") routes.set(name, { kind: "http", tool, binding: b.binding });
    else if (b.kind === "process") routes.set(name, { kind: "process", tool, binding: b.binding });
    else routes.set(name, { kind: "unsupported", tool, backend: b.kind });
  }
  return routes;
}

type Execute = (ticket: ExecutionTicket, options?: { signal?: AbortSignal }) => Promise<RuntimeResult>;

/** Routing: a ticket's tool name picks the executor and binding; the file executor starts on first use. */
const NO_EXECUTOR: RuntimeResult = {
  ok: false,
  code: "ERR_LOOP_NO_EXECUTOR",
  message: "no executor serves this tool",
};

function router(executors: RuntimeExecutors, routes: Map<string, Route>): Execute {
  return async (ticket, options = {}) => {
    const route = ticket.tool === undefined ? undefined : routes.get(ticket.tool);
    const call = options.signal === undefined ? {} : { signal: options.signal };
    if (route === undefined) return NO_EXECUTOR;
    switch (route.kind) {
      case "file": {
        const file = executors.file();
        return file ? fileView(await file.execute(ticket, route.builtin.binding, call)) : NO_EXECUTOR;
      }
      case "http": {
        const http = executors.http;
        return http ? contractView(route.tool, await http.execute(ticket, route.binding, call)) : NO_EXECUTOR;
      }
      case "process": {
        const proc = executors.process;
        return proc ? contractView(route.tool, await proc.execute(ticket, route.binding, call)) : NO_EXECUTOR;
      }
      case "unsupported":
        return {
          ok: false,
          code: "ERR_LOOP_NO_EXECUTOR",
          message: `${route.backend} tools are not served by this runtime`,
        };
    }
  };
}

function assemble(o: RuntimeOptions, rt: ComposedRuntime, a: Assembly): Runtime {
  const { registry, source, builtins, classify, sandbox, dbPath, pair, generatedAt } = a;
  const execute = router(rt.executors, routeTable(registry, builtins));
  const info = publicKeyInfo(pair.publicKey);
  return {
    gate: rt.gate,
    approvals: rt.approvals,
    journal: rt.journal,
    store: rt.store,
    sessions: rt.sessions,
    policy: rt.policy as PolicyBundle,
    principalId: o.principal,
    dbPath,
    key: {
      keyId: info.keyId,
      publicKeyPem: info.publicKeyPem,
      ...(generatedAt !== undefined ? { generatedAt } : {}),
    },
    sandbox,
    rejectedContracts: registry.rejected,
    catalog: contractCatalog(source, { classify }),
    executor: executorPort<ExecutionTicket>(
      (ticket, options) => execute(ticket, options) as Promise<GovernedResult>,
    ),
    classify(name) {
      const tool = source.get(name);
      return tool === undefined ? undefined : classify(tool);
    },
    execute,
    verify: () => verifyJournal(rt.store, new Keyring([pair.publicKey])),
    startRun: (principalId, options) => rt.startRun(principalId, options),
    close: () => rt.close(),
  };
}
