// Loading the contract directory with the TOFU key pins shared by several replicas
// (distributed mode, docs/distributed.md "Consistency model"). Checks are synchronous
// while contracts load, so the shared pins are read first into an in-memory store and the
// directory is loaded as on one node (loadContractsTrusted). Then every key the load pinned
// for the first time is offered to the shared store, where the first pin of a (tool,
// domain) wins on every replica. When another replica's pin won with a different key, the
// winner joins the seed and the directory is loaded again: the tool is now refused as a
// changed key (ERR_INTEGRITY_KEY_PIN_MISMATCH, and in mode enforce the whole load, with
// ContractLoadRefusedError), exactly as on one node. Only the last load's events count.
import { isoTime } from "../contracts/index.js";
import { type PinEntry, PinStore, type SharedPins, type TrustStore } from "./integrity/index.js";
import { fail } from "./integrity/result.js";
import { loadContractsTrusted, type TrustedLoad, type TrustedLoadOptions } from "./trusted-load.js";

/** Loads again at most this often: each round adds a winner that never goes away by itself. */
const MAX_ROUNDS = 4;

export interface SharedTrustedLoad extends TrustedLoad {
  /** The trust store the registry was admitted under (its pins: this replica's view). */
  trust: TrustStore;
}

function firstPins(load: TrustedLoad, pinnedAt: string): PinEntry[] {
  return load.registry.verified
    .filter((v) => v.verified.pin === "first_use")
    .map((v) => ({
      toolId: v.tool,
      domain: v.verified.domain,
      fingerprint: v.verified.fingerprint,
      pinnedAt,
    }));
}

/**
 * Loads every contract in `dir` under `trust` with its key pins in `shared`. Throws what
 * loadContractsTrusted throws, ERR_INTEGRITY_TRUST_CONFIG when `trust` has a pins file,
 * ERR_INTEGRITY_PIN_STORE when the pins keep changing under the load, or the shared
 * store's own error (fail closed: no registry without the pins written).
 */
export async function loadContractsShared(
  dir: string,
  trust: TrustStore,
  shared: SharedPins,
  options: TrustedLoadOptions & { now?: () => Date } = {},
): Promise<SharedTrustedLoad> {
  // A pins file is refused in every mode: it would never be read.
  if (trust.pins?.path !== undefined) {
    fail(
      "ERR_INTEGRITY_TRUST_CONFIG",
      "trust.pins is a node-local file: with store.kind postgres the pins are shared in the database",
    );
  }
  if (trust.mode === "off") return { ...loadContractsTrusted(dir, trust, options), trust };
  const seed = await shared.load();
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const pins = PinStore.fromEntries(seed);
    const pinned = trust.withPins(pins);
    const load = loadContractsTrusted(dir, pinned, options);
    const created = firstPins(load, isoTime(options.now?.() ?? new Date()));
    const lost: PinEntry[] = [];
    for (const entry of created) {
      const winner = await shared.pinFirst(entry);
      if (winner.fingerprint !== entry.fingerprint) lost.push(winner);
    }
    if (lost.length === 0) return { ...load, trust: pinned };
    seed.push(...lost);
  }
  fail("ERR_INTEGRITY_PIN_STORE", `the shared key pins kept changing while ${dir} loaded`);
}
