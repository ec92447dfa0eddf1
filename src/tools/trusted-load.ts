// Loading the contract directory under the runtime's trust store. In mode "enforce"
// the load is all or nothing: one manifest that is unsigned, tampered, signed by a key
// outside the store or a revoked key, re-keyed against its pin, a symlink, unparsable
// or a duplicate makes the whole load throw ContractLoadRefusedError (code
// ERR_TOOL_REGISTRY_UNVERIFIED) — no registry is returned and no pin is written, so a
// tampered directory can never leave a half-trusted tool set behind. In mode "off" the
// registry loads exactly as ContractRegistry.load(dir) does. Either way every manifest
// yields one load event the runtime journals (see integrity/load-events.ts).
import { basename, dirname, sep } from "node:path";
import { sha256Hex, ToolError } from "../contracts/index.js";
import { contractToCanonical } from "./canonical.js";
import type { CustomType } from "./contract-schema.js";
import {
  type ContractLoadEvent,
  type ContractRefusedBody,
  PinStore,
  schemapinCanonicalBytes,
  type TrustStore,
} from "./integrity/index.js";
import { ContractRegistry, type RejectedContract } from "./registry.js";

export interface TrustedLoad {
  registry: ContractRegistry;
  /** One event per manifest, loaded ones first, each list sorted by file name. */
  events: ContractLoadEvent[];
}

export interface TrustedLoadOptions {
  /** Project types; default: `toolclad.toml` in the directory when present. */
  types?: Readonly<Record<string, CustomType>>;
}

/** Thrown when trust mode is enforce and any manifest in the directory was refused. */
export class ContractLoadRefusedError extends ToolError {
  /** Every manifest's event, refused ones included (journal them before exiting). */
  readonly events: readonly ContractLoadEvent[];
  /** The refusals, each with its own stable code (ERR_INTEGRITY_*, ERR_TOOL_*). */
  readonly refused: readonly ContractRefusedBody[];

  constructor(dir: string, events: ContractLoadEvent[]) {
    const refused = events.filter((e): e is ContractRefusedBody => e.outcome === "refused");
    const first = refused[0];
    super(
      "ERR_TOOL_REGISTRY_UNVERIFIED",
      `contract directory ${dir} refused under trust mode enforce: ${refused.length} manifest(s) failed` +
        (first === undefined ? "" : `, first ${first.file}: ${first.code}`),
      { details: { refused: refused.map((r) => ({ file: r.file, code: r.code })) } },
    );
    this.events = events;
    this.refused = refused;
  }
}

function contractHash(registry: ContractRegistry, tool: string): string {
  const compiled = registry.get(tool);
  if (compiled === undefined) throw new Error(`registered tool ${tool} is missing`);
  return sha256Hex(schemapinCanonicalBytes(contractToCanonical(compiled.contract)));
}

function refusedEvent(r: RejectedContract, mode: TrustStore["mode"], dir: string): ContractRefusedBody {
  // File names only: the journal should not carry the deployment's directory layout.
  const prefix = `${dirname(r.file)}${sep}`;
  return {
    outcome: "refused",
    trust_mode: mode,
    file: basename(r.file),
    tool: r.tool ?? null,
    code: r.code,
    message: r.message.split(prefix).join("").split(dir).join(".").slice(0, 2048),
  };
}

function eventsOf(registry: ContractRegistry, mode: TrustStore["mode"], dir: string): ContractLoadEvent[] {
  const verified = new Map(registry.verified.map((v) => [v.tool, v]));
  const loaded: ContractLoadEvent[] = registry.names().map((tool) => {
    const v = verified.get(tool);
    if (v === undefined) {
      return {
        outcome: "loaded",
        trust_mode: mode,
        file: basename(registry.fileOf(tool) ?? tool),
        tool,
        contract_hash: contractHash(registry, tool),
        verified: false,
        key_id: null,
        key_fingerprint: null,
        domain: null,
        pin: null,
      };
    }
    return {
      outcome: "loaded",
      trust_mode: mode,
      file: basename(v.file),
      tool,
      contract_hash: v.verified.contractHash,
      verified: true,
      key_id: v.verified.keyId,
      key_fingerprint: v.verified.fingerprint,
      domain: v.verified.domain,
      pin: v.verified.pin,
    };
  });
  const refused = [...registry.rejected]
    .sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))
    .map((r) => refusedEvent(r, mode, dir));
  return [...loaded, ...refused];
}

/** An in-memory copy of the pin store, so a refused load pins nothing on disk. */
function stagePins(pins: PinStore): PinStore {
  const staged = PinStore.inMemory();
  // Only fingerprints matter here; the real store keeps its own pinned_at dates
  // (SchemaPin's flat pin format has none).
  for (const e of pins.entries()) staged.pin(e.toolId, e.domain, e.fingerprint);
  return staged;
}

/**
 * Loads every contract in `dir` under `trust`. Returns the registry and its load
 * events, or (mode enforce, any manifest refused) throws ContractLoadRefusedError.
 */
export function loadContractsTrusted(
  dir: string,
  trust: TrustStore,
  options: TrustedLoadOptions = {},
): TrustedLoad {
  const types = options.types === undefined ? {} : { types: options.types };
  if (trust.mode === "off") {
    const registry = ContractRegistry.load(dir, types);
    return { registry, events: eventsOf(registry, "off", dir) };
  }
  const staged = trust.pins === undefined ? undefined : stagePins(trust.pins);
  const registry = ContractRegistry.load(dir, {
    ...types,
    requireSignatures: true,
    integrity: trust.verifyOptions(staged),
  });
  const events = eventsOf(registry, "enforce", dir);
  if (registry.rejected.length > 0) throw new ContractLoadRefusedError(dir, events);
  if (trust.pins !== undefined) {
    for (const v of registry.verified) {
      if (v.verified.pin === "first_use" || v.verified.pin === "repinned") {
        trust.pins.pin(v.tool, v.verified.domain, v.verified.fingerprint, { replace: true });
      }
    }
  }
  return { registry, events };
}
