// Opening APAE's parts for the runtime: the trust store (SQLite, memory or the shared
// PostgreSQL store), the engine, peers, trust domains, the ECT level, key and ledger, and
// the verified behaviour specs. A part that fails closes the store; nothing half-opens.
import type { KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import { parseStrictJson, type TaskOutcome, TrustError } from "../contracts/index.js";
import { keyIdOf, loadPublicKeyFile } from "../crypto/index.js";
import {
  BehaviorVerifier,
  EctEmitter,
  EctLedger,
  MemoryTrustStore,
  PROFILE_MECHANISMS,
  parseTrustConfig,
  registerEctLedgerEventType,
  registerTrustEventTypes,
  SqliteTrustStore,
  TRUST_DELIVERY_FAILED_EVENT,
  TrustDomains,
  TrustEngine,
  type TrustEventKind,
  type TrustStore,
} from "../trust/index.js";
import { ApaePeers } from "./apae-peers.js";
import { ectKeyFor } from "./ect-key.js";

/** An executor's reported outcome → its trust event (APAE § Trust Scoring's table). */
const _TASK_EVENTS = {
  success: "task_success",
  failure: "task_failure",
  timeout: "task_timeout",
} as const satisfies Record<TaskOutcome, TrustEventKind>;

import type { Parts, RuntimeApaeConfig } from "./apae.js";

/** Loads and verifies the configured behaviour specs (a bad signature stops the start). */
async function openBehavior(
  config: RuntimeApaeConfig,
  engine: TrustEngine,
  emitter: Pick<EctEmitter, "emit">,
): Promise<BehaviorVerifier> {
  const keys = new Map<string, KeyObject>();
  for (const file of config.behavior?.keys ?? []) {
    const key = loadPublicKeyFile(file);
    keys.set(keyIdOf(key), key);
  }
  const verifier = new BehaviorVerifier({ engine, emitter, specKeys: keys, audience: engine.config.self_id });
  for (const file of config.behavior?.specs ?? []) {
    let doc: unknown;
    try {
      doc = parseStrictJson(readFileSync(file, "utf8"));
    } catch (err) {
      throw new TrustError("ERR_TRUST_SPEC_INVALID", `behaviour spec ${file} is not JSON`, { cause: err });
    }
    await verifier.install(doc);
  }
  return verifier;
}

/** Opens the store, loads the deployment's table and the peers; closes the store on failure. */
export async function openParts(config: RuntimeApaeConfig, p: Parts) {
  registerTrustEventTypes(p.registry);
  const settings = parseTrustConfig(config.settings ?? {});
  const path = config.store ?? (p.journalPath === ":memory:" ? undefined : `${p.journalPath}.trust.db`);
  const store: TrustStore =
    p.shared?.store ?? (path === undefined ? new MemoryTrustStore() : SqliteTrustStore.open(path));
  const engine = new TrustEngine({ store, config: settings, clock: p.clock });
  try {
    if (config.peers !== undefined && config.peers.length > 0 && config.ect === undefined) {
      throw new TrustError(
        "ERR_TRUST_CONFIG_INVALID",
        "apae.peers needs apae.ect (this deployment's ECT key)",
      );
    }
    const peers =
      config.ect === undefined
        ? undefined
        : new ApaePeers(engine, config.ect, config.peers ?? [], {
            clock: p.clock,
            delivery: {
              ...config.delivery,
              onGiveUp: async (body) => {
                await p.journal.append({ type: TRUST_DELIVERY_FAILED_EVENT, body });
              },
            },
          });
    if (
      config.agreements !== undefined &&
      config.agreements.length > 0 &&
      (config.domain === undefined || peers === undefined)
    ) {
      throw new TrustError("ERR_TRUST_CONFIG_INVALID", "apae.agreements need apae.domain and apae.ect");
    }
    const domains =
      config.domain === undefined
        ? undefined
        : new TrustDomains(engine, config.domain, config.agreements ?? []);
    const level = config.ectLevel ?? PROFILE_MECHANISMS[config.profile ?? "standard"].ect_level;
    const key = level === "L1" ? undefined : ectKeyFor(config.ect?.key, p.journalPath).key;
    let ledger: EctLedger | undefined;
    if (level === "L3") {
      registerEctLedgerEventType(p.registry);
      ledger = await EctLedger.open(p.journal, p.ectIndex);
    }
    // The deployment's own protocol ECTs (behaviour specs, compliance checks) at its level.
    const emitter = new EctEmitter({
      level,
      issuer: config.ect?.issuer ?? settings.self_id,
      ...(key !== undefined ? { key } : {}),
      ...(ledger !== undefined ? { ledger } : {}),
      clock: () => engine.now(),
    });
    const behavior = await openBehavior(config, engine, emitter);
    const stream = { level, key, ledger };
    return { engine, peers, domains, behavior, stream };
  } catch (err) {
    await store.close();
    throw err;
  }
}
