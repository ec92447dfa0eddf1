// One scenario's deployment: a runtime composed from the target's configuration in a
// private scratch directory (journal, principal state, trust table and message nonces all
// live there, with a fresh journal key), a run started for the target's agent, and the
// helpers scenarios share — make a call through the Gate, redeem a ticket with the
// executor the contract's backend names, read the journal back and verify it. Closed and
// deleted when the scenario ends, whatever it observed.
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { uuidv7 } from "../contracts/index.js";
import { generateKeyPair, Keyring } from "../crypto/index.js";
import { bindingForContract } from "../executors/index.js";
import { type GateOutcome, ticketOf } from "../gate/index.js";
import { type JournalEntry, MalformedRecord, type VerifyReport, verifyJournal } from "../journal/index.js";
import { composeRuntime, type Runtime, type RuntimeConfig, type RuntimeDeps } from "../runtime/index.js";
import { type CompiledTool, classifyContract, type ToolClassification } from "../tools/index.js";
import type { LibraryTarget, ProbeCall } from "./types.js";

/** What an executor returned, reduced to what scenarios read. */
export type Executed =
  | { ok: true; evidence: Record<string, unknown>; output: unknown }
  | { ok: false; code: string; message: string };

export interface Scenario {
  readonly rt: Runtime;
  readonly dir: string;
  readonly agent: string;
  readonly runId: string;
  /** A request for the scenario's run (principal and run filled in). */
  request(
    tool: string,
    parameters: Record<string, unknown>,
    extra?: Record<string, unknown>,
  ): Record<string, unknown>;
  /** Asks the Gate about a contract-named call. */
  authorize(
    tool: string,
    parameters: Record<string, unknown>,
    extra?: Record<string, unknown>,
  ): Promise<GateOutcome>;
  /** Redeems whatever ticket is given with the executor of the tool's backend (never checks it here). */
  execute(tool: string, ticket: unknown): Promise<Executed>;
  /** authorize, then execute when a ticket came back, then report the result to the Gate. */
  call(
    tool: string,
    parameters: Record<string, unknown>,
  ): Promise<{ outcome: GateOutcome; executed?: Executed }>;
  entries(): Promise<JournalEntry[]>;
  verify(source?: Iterable<unknown>, expectHead?: unknown): Promise<VerifyReport>;
}

export interface ScenarioOptions {
  /** Dependencies for the composition root (a function: built once the scratch directory exists). */
  deps?: RuntimeDeps | ((dir: string) => RuntimeDeps);
  /** Changes to the configuration this scenario needs (e.g. an extra policy file). */
  config?: (c: RuntimeConfig, dir: string) => RuntimeConfig;
}

function toolOf(rt: Runtime, name: string) {
  const tool = rt.contracts?.get(name);
  if (tool === undefined) throw new Error(`the deployment has no contract named ${name}`);
  return tool;
}

async function redeem(rt: Runtime, name: string, ticket: unknown): Promise<Executed> {
  const b = bindingForContract(toolOf(rt, name));
  // The executors refuse anything that is not a live ticket the Gate minted; a scenario
  // hands over what it has (a real ticket, a forged one, a reused one) and observes.
  const t = ticket as Parameters<NonNullable<Runtime["executors"]["process"]>["execute"]>[0];
  let r: { ok: boolean; code?: string; message?: string; evidence?: unknown; output?: unknown };
  if (b.kind === "process") {
    if (rt.executors.process === undefined)
      return { ok: false, code: "NO_EXECUTOR", message: "no process executor" };
    r = await rt.executors.process.execute(t, b.binding);
  } else if (b.kind === "http") {
    if (rt.executors.http === undefined)
      return { ok: false, code: "NO_EXECUTOR", message: "no http executor" };
    r = await rt.executors.http.execute(t, b.binding);
  } else {
    if (rt.executors.mcp === undefined) return { ok: false, code: "NO_EXECUTOR", message: "no mcp executor" };
    r = await rt.executors.mcp.execute(t, b.binding);
  }
  return r.ok
    ? { ok: true, evidence: r.evidence as Record<string, unknown>, output: r.output }
    : { ok: false, code: r.code ?? "unknown", message: r.message ?? "" };
}

/** An executor's output as JSON data (byte buffers as UTF-8 text), as results are reported. */
function jsonData(v: unknown): unknown {
  if (Buffer.isBuffer(v)) return v.toString("utf8");
  if (Array.isArray(v)) return v.map(jsonData);
  if (v !== null && typeof v === "object")
    return Object.fromEntries(
      Object.entries(v)
        .filter(([, x]) => x !== undefined)
        .map(([k, x]) => [k, jsonData(x)]),
    );
  return typeof v === "number" && !Number.isFinite(v) ? null : v;
}

async function readAll(rt: Runtime): Promise<JournalEntry[]> {
  const out: JournalEntry[] = [];
  for await (const e of rt.store.entries()) if (!(e instanceof MalformedRecord)) out.push(e);
  return out;
}

/** The contract trust section with its TOFU pin store copied into `dir` (pins are written on first use). */
function scratchTrust(contracts: RuntimeConfig["contracts"], dir: string): RuntimeConfig["contracts"] {
  const trust = contracts?.trust as { pins?: unknown } | undefined;
  if (contracts === undefined || typeof trust?.pins !== "string") return contracts;
  const from = resolve(contracts.baseDir ?? process.cwd(), trust.pins);
  const to = join(dir, "contract-pins.json");
  if (existsSync(from)) copyFileSync(from, to);
  return { ...contracts, trust: { ...trust, pins: to } };
}

/** The configuration with every file the runtime writes moved into `dir` and a fresh key. */
export function scratchConfig(c: RuntimeConfig, dir: string): RuntimeConfig {
  const journal = join(dir, "journal.db");
  const { principalState: _p, store: _s, contracts, ...rest } = c;
  const scratchContracts = scratchTrust(contracts, dir);
  return {
    ...rest,
    ...(scratchContracts !== undefined ? { contracts: scratchContracts } : {}),
    journal: { ...c.journal, path: journal, signer: generateKeyPair("ed25519") },
    ...(c.apae !== undefined ? { apae: { ...c.apae, store: `${journal}.trust.db` } } : {}),
    ...(c.messaging !== undefined
      ? { messaging: { ...c.messaging, nonceStore: `${journal}.messages.db` } }
      : {}),
  };
}

type Classify = (tool: CompiledTool) => ToolClassification;

function scenarioOf(
  rt: Runtime,
  dir: string,
  run: { agent: string; runId: string; classify: Classify },
): Scenario {
  const { agent, runId } = run;
  const s: Scenario = {
    rt,
    dir,
    agent,
    runId,
    request: (tool, parameters, extra = {}) => {
      const c = rt.contracts?.get(tool);
      const cls = c !== undefined ? run.classify(c) : { toolClass: "conformance", action: "probe" };
      return { principalId: agent, runId, ...cls, tool, parameters, ...extra };
    },
    authorize: (tool, parameters, extra) => rt.gate.authorize(s.request(tool, parameters, extra)),
    execute: (tool, ticket) => redeem(rt, tool, ticket),
    async call(tool, parameters) {
      const outcome = await s.authorize(tool, parameters);
      const ticket = ticketOf(outcome);
      if (ticket === undefined || outcome.decisionId === null) return { outcome };
      const executed = await redeem(rt, tool, ticket);
      const hash = executed.ok ? executed.evidence.output_hash : undefined;
      await rt.gate.recordResult(outcome.decisionId, {
        outcome: executed.ok ? "success" : "failure",
        ...(executed.ok ? { data: jsonData(executed.output) } : {}),
        ...(typeof hash === "string" ? { outputHash: hash as `sha256:${string}` } : {}),
      });
      return { outcome, executed };
    },
    entries: () => readAll(rt),
    verify: (source, expectHead) =>
      verifyJournal(
        source ?? rt.store,
        new Keyring([rt.signer.publicKey]),
        expectHead === undefined ? {} : { expectHead },
      ),
  };
  return s;
}

/** Runs `fn` over a fresh runtime of the target; always closes it and removes the scratch directory. */
export async function withScenario<T>(
  t: LibraryTarget,
  fn: (s: Scenario) => Promise<T>,
  o: ScenarioOptions = {},
): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "warden-conformance-"));
  try {
    let config = scratchConfig(t.config, dir);
    if (o.config) config = o.config(config, dir);
    const deps = typeof o.deps === "function" ? o.deps(dir) : (o.deps ?? {});
    const rt = await (t.open ?? composeRuntime)(config, deps);
    try {
      const run = await rt.startRun(t.agent);
      const classify = config.gate.classify ?? classifyContract;
      return await fn(scenarioOf(rt, dir, { agent: t.agent, runId: run.runId, classify }));
    } finally {
      await rt.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The probe call: the target's, else the first contract whose required arguments are strings. */
export function probeOf(t: { probe?: ProbeCall }, rt?: Runtime): ProbeCall {
  if (t.probe !== undefined) return t.probe;
  for (const name of rt?.contracts?.names() ?? []) {
    const args = Object.entries(rt?.contracts?.get(name)?.contract.args ?? {});
    const required = args.filter(([, a]) => a.required);
    if (!required.every(([, a]) => a.type === "string")) continue;
    const text = required[0]?.[0];
    return {
      tool: name,
      parameters: Object.fromEntries(required.map(([k]) => [k, "conformance"])),
      ...(text !== undefined ? { textArg: text } : {}),
    };
  }
  throw new Error("no probe call: give one (--probe) or a contract whose required arguments are strings");
}

/** A tool name no deployment declares. */
export const unknownTool = (): string => `conformance-unknown-${uuidv7().slice(-12)}`;

export function describeOutcome(o: GateOutcome): string {
  return `${o.decision}${o.reasonCodes.length ? ` [${o.reasonCodes.join(", ")}]` : ""}`;
}
