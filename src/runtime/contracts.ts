// Contracts at start-up, under the runtime's trust store: the directory is loaded with
// loadContractsTrusted, every manifest's load event is journaled (loaded and refused
// alike) and made durable, and a refusal stops the start with its coded error after its
// events are in the journal. Without a contract directory nothing is loaded and the
// trust store is still built, so a malformed `trust:` section fails the start too.
// Distributed mode: the key pins are the shared table's (loadContractsShared); a
// `trust.pins` file is refused there (ERR_INTEGRITY_TRUST_CONFIG).
import { RuntimeError } from "../contracts/index.js";
import type { Journal } from "../journal/index.js";
import {
  ContractLoadRefusedError,
  type ContractRegistry,
  loadContractsShared,
  loadContractsTrusted,
  type SharedPins,
  type TrustedLoad,
  TrustStore,
} from "../tools/index.js";
import type { RuntimeContractsConfig } from "./config.js";
import { journalContractEvents } from "./events.js";

export interface LoadedContracts {
  registry: ContractRegistry | undefined;
  trust: TrustStore;
}

export async function loadContracts(
  c: RuntimeContractsConfig | undefined,
  journal: Pick<Journal, "append">,
  shared?: SharedPins,
): Promise<LoadedContracts> {
  if (c === undefined) return { registry: undefined, trust: TrustStore.off() };
  let trust = TrustStore.fromConfig(c.trust, c.baseDir === undefined ? {} : { baseDir: c.baseDir });
  let loaded: TrustedLoad;
  try {
    if (shared === undefined) loaded = loadContractsTrusted(c.dir, trust);
    else ({ trust, ...loaded } = await loadContractsShared(c.dir, trust, shared));
  } catch (err) {
    if (err instanceof ContractLoadRefusedError) await journalContractEvents(journal, err.events);
    throw err;
  }
  await journalContractEvents(journal, loaded.events);
  const rejected = loaded.registry.rejected;
  if (c.refuseRejected === true && rejected.length > 0) {
    const r = rejected[0];
    throw new RuntimeError(
      "ERR_RUNTIME_CONFIG_INVALID",
      `${rejected.length} contract(s) rejected; first: ${r?.file}: ${r?.code}: ${r?.message}`,
    );
  }
  return { registry: loaded.registry, trust };
}
